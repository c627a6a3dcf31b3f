//! Whether delayq knows a queue name, as the overview does: any of its
//! keys, a schedule, delayq's registry or the sampler's list. A name none
//! of them knows is most likely mistyped: the page says so and offers the
//! closest known names.

use delayq::QueueStatus;

use crate::Shared;

/// Suggestions offered for an unknown name, most.
const SUGGESTIONS: usize = 3;

/// Whether `name` is a queue delayq knows (`status` is its status read
/// now). The registry is read only for a name with no key the sampler has
/// not listed: a mistyped one.
pub(crate) async fn known(shared: &Shared, name: &str, status: &QueueStatus) -> delayq::Result<bool> {
    if status.exists || shared.queues.read().entries.contains_key(name) {
        return Ok(true);
    }
    if !shared
        .client
        .schedules(&delayq::QueueKeys::new(name)?)?
        .list()
        .await?
        .is_empty()
    {
        return Ok(true);
    }
    Ok(shared
        .client
        .registered_queues()
        .await?
        .iter()
        .any(|known| known == name))
}

/// The known queue names closest to `name` (case-insensitive edit
/// distance), closest first: a typo or two away, at most a third of it.
pub(crate) fn did_you_mean(shared: &Shared, name: &str) -> Vec<String> {
    let typed: Vec<char> = name.to_lowercase().chars().collect();
    let most = 2.max(typed.len() / 3);
    let queues = shared.queues.read();
    let mut close: Vec<(usize, &String)> = queues
        .entries
        .keys()
        .filter_map(|known| {
            let other: Vec<char> = known.to_lowercase().chars().collect();
            let d = distance(&typed, &other);
            (d <= most && known != name).then_some((d, known))
        })
        .collect();
    close.sort();
    close
        .into_iter()
        .take(SUGGESTIONS)
        .map(|(_, known)| known.clone())
        .collect()
}

/// Levenshtein distance: insertions, deletions and substitutions.
fn distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    fn d(a: &str, b: &str) -> usize {
        super::distance(&a.chars().collect::<Vec<_>>(), &b.chars().collect::<Vec<_>>())
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(d("svc-ordrs-1", "svc-orders-1"), 1);
        assert_eq!(d("orders", "ordesr"), 2);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("same", "same"), 0);
    }
}
