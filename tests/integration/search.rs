//! `Client::search`: by id or by text across queues, through pending
//! elements, ready values and dead letters, a bounded number of values per
//! call, continued by a cursor.

use std::time::Duration;

use delayq::fred::interfaces::ListInterface;
use delayq::search::{Search, SearchCursor, SearchPage, ValueState};
use delayq::{Client, Error, StringCodec};

use delayq_test_support::redis_test;

const HOUR: Duration = Duration::from_secs(3600);

/// Every page of `search`, from the start to the end.
async fn all_pages(client: &Client, search: &Search) -> Vec<SearchPage> {
    let mut pages = vec![client.search(search, None).await.unwrap()];
    while let Some(next) = pages.last().unwrap().next.clone() {
        pages.push(client.search(search, Some(&next)).await.unwrap());
    }
    pages
}

fn found(pages: &[SearchPage]) -> Vec<(String, ValueState, String)> {
    pages
        .iter()
        .flat_map(|p| &p.matches)
        .map(|m| (m.queue.clone(), m.state, m.text.clone()))
        .collect()
}

redis_test! {
    /// 100,000 pending values: each call looks at the budget and no more,
    /// says how far it got of how many, and the cursor goes on to the end;
    /// the one value that matches is found once, and found at once by its
    /// id through the index.
    scale async fn a_hundred_thousand_values_are_searched_a_budget_per_call(client) {
        let n = 100_000u64;
        let queue = client.delayed_queue::<String, _>("big", StringCodec).unwrap().without_transfer();
        queue
            .offer_all((0..n).map(|i| {
                let value = if i == 87_654 { "the Needle here".to_owned() } else { format!("value {i}") };
                (value, HOUR + Duration::from_millis(i))
            }))
            .await
            .unwrap();
        queue.offer_with_id("needle-id", &"last of all".to_owned(), HOUR * 2).await.unwrap();

        let search = Search::new("NEEDLE");
        let pages = all_pages(&client, &search).await;
        assert_eq!(pages.len(), 11, "10,000 values a call: {}", pages.len());
        let mut before = 0;
        for (i, page) in pages.iter().enumerate() {
            assert_eq!(page.total, n + 1);
            let looked = page.searched - before;
            before = page.searched;
            if i < 10 {
                assert_eq!(looked, 10_000, "page {i}");
                assert!(page.next.is_some());
            } else {
                assert_eq!(looked, 1, "the last page");
                assert!(page.next.is_none());
            }
        }
        assert_eq!(before, n + 1, "every value looked at once");
        // The text where the scan reaches it, in due order, in any case.
        assert_eq!(pages.iter().map(|p| p.matches.len()).sum::<usize>(), 2);
        assert_eq!(pages[8].matches[0].text, "the Needle here");
        assert_eq!(pages[8].matches[0].position, 87_654);
        assert_eq!(pages[8].matches[0].state, ValueState::Pending);
        // And in an id.
        assert_eq!(pages[10].matches[0].text, "last of all");
        assert_eq!(pages[10].matches[0].id.as_deref(), Some("needle-id"));
        assert!(!pages[10].matches[0].by_id);

        // An id exactly: found at once through the index, and not again by the scan.
        let by_id = all_pages(&client, &Search::new("needle-id")).await;
        assert_eq!(by_id.len(), 11);
        assert!(by_id[0].matches[0].by_id);
        assert_eq!(by_id[0].matches[0].text, "last of all");
        assert_eq!(by_id[0].matches[0].position, n as usize);
        assert_eq!(by_id.iter().map(|p| p.matches.len()).sum::<usize>(), 1);

        // A smaller budget: smaller steps, same end.
        let small = all_pages(&client, &Search::new("needle here").budget(30_000)).await;
        assert_eq!(small.len(), 4);
        assert_eq!(found(&small), [("big".to_owned(), ValueState::Pending, "the Needle here".to_owned())]);
        let none = all_pages(&client, &Search::new("no such thing").budget(MAX)).await;
        assert_eq!(none.len(), 2);
        assert!(none.iter().all(|p| p.matches.is_empty()));
    }
}

const MAX: usize = delayq::search::MAX_BUDGET;

redis_test! {
    /// Across queues (unicode names) and states: pending values and their
    /// ids, ready values, dead letters; filtered by queue and state; in any
    /// case; matched as the render function reads the payload; continued one
    /// match at a time without a match lost or repeated; nothing matching
    /// says so.
    async fn search_finds_values_in_every_state_of_every_queue(client, raw) {
        let orders = client.delayed_queue::<String, _>("заказы-📦", StringCodec).unwrap().without_transfer();
        orders.offer(&"Order ORD-42 for Анна".to_owned(), HOUR).await.unwrap();
        orders.offer_with_id("ord-43", &"second order".to_owned(), HOUR * 2).await.unwrap();
        let _: () = raw.client.rpush("заказы-📦", vec!["ready ord-44", "ready other"]).await.unwrap();
        let _: () = raw.client.rpush("delayq_dead_letter:{заказы-📦}", "dead ORD-45").await.unwrap();
        let _: () = raw.client.rpush("delayq_dead_letter:{t}mail", vec!["bounced ord-46", "fine"]).await.unwrap();
        let mail = client.delayed_queue::<String, _>("{t}mail", StringCodec).unwrap().without_transfer();
        mail.offer(&"mail about ord-47".to_owned(), HOUR).await.unwrap();

        let everything = all_pages(&client, &Search::new("oRd-4")).await;
        assert_eq!(everything.len(), 1);
        assert_eq!(everything[0].total, 8);
        let queue = "заказы-📦".to_owned();
        let mail_name = "{t}mail".to_owned();
        assert_eq!(
            found(&everything),
            [
                (mail_name.clone(), ValueState::Pending, "mail about ord-47".to_owned()),
                (mail_name.clone(), ValueState::Dead, "bounced ord-46".to_owned()),
                (queue.clone(), ValueState::Pending, "Order ORD-42 for Анна".to_owned()),
                (queue.clone(), ValueState::Pending, "second order".to_owned()),
                (queue.clone(), ValueState::Ready, "ready ord-44".to_owned()),
                (queue.clone(), ValueState::Dead, "dead ORD-45".to_owned()),
            ]
        );
        let second = &everything[0].matches[3];
        assert_eq!((second.id.as_deref(), second.by_id, second.position), (Some("ord-43"), false, 1));
        let ready = &everything[0].matches[4];
        assert_eq!((ready.position, ready.due, ready.id.as_deref()), (0, None, None));

        // One match a call: the same matches, in the same order, none twice.
        let one_by_one = all_pages(&client, &Search::new("oRd-4").limit(1)).await;
        assert_eq!(found(&one_by_one), found(&everything));
        assert!(one_by_one.iter().all(|p| p.matches.len() <= 1));

        // By queue, by state.
        let dead = all_pages(&client, &Search::new("ord").queue(&queue).states(&[ValueState::Dead])).await;
        assert_eq!(found(&dead), [(queue.clone(), ValueState::Dead, "dead ORD-45".to_owned())]);
        assert_eq!(dead[0].total, 1);
        let cyrillic = all_pages(&client, &Search::new("АННА").states(&[ValueState::Pending, ValueState::Ready])).await;
        assert_eq!(found(&cyrillic), [(queue.clone(), ValueState::Pending, "Order ORD-42 for Анна".to_owned())]);

        // An id exactly: through the index, first, and not again by the scan.
        let by_id = all_pages(&client, &Search::new("ord-43")).await;
        let matches: Vec<_> = by_id.iter().flat_map(|p| &p.matches).collect();
        assert_eq!(matches.len(), 1, "{matches:?}");
        assert!(matches[0].by_id);
        assert!(matches[0].due.is_some());

        // Matched as the render function reads the payload.
        let rendered = all_pages(
            &client,
            &Search::new("READY ORD").render(|_, payload| String::from_utf8_lossy(payload).replace("ready", "decoded")),
        )
        .await;
        assert!(found(&rendered).is_empty());
        let rendered = all_pages(
            &client,
            &Search::new("decoded ord").render(|_, payload| String::from_utf8_lossy(payload).replace("ready", "decoded")),
        )
        .await;
        assert_eq!(found(&rendered), [(queue.clone(), ValueState::Ready, "decoded ord-44".to_owned())]);

        // Nothing matches: no match, everything looked at.
        let nothing = client.search(&Search::new("no such order"), None).await.unwrap();
        assert!(nothing.matches.is_empty() && nothing.next.is_none());
        assert_eq!(nothing.searched, 8);
    }
}

redis_test! {
    /// An empty text and a cursor no search printed are refused, clearly.
    async fn an_empty_search_and_a_bad_cursor_are_refused(client) {
        assert!(matches!(client.search(&Search::new(""), None).await, Err(Error::InvalidArgument(_))));
        assert!(matches!("orders.pending.1".parse::<SearchCursor>(), Err(Error::InvalidArgument(_))));
    }
}

redis_test! {
    /// An id is looked up in every queue's index before any value is read,
    /// so it is found by the first call however many values come before its
    /// queue in name order (it used to wait for the walk to reach its
    /// queue: a first page of "no match" for a job that exists).
    async fn an_exact_id_is_found_by_the_first_call_in_any_queue(client) {
        let busy = client.delayed_queue::<String, _>("a-busy", StringCodec).unwrap().without_transfer();
        busy.offer_all((0..2_000u64).map(|i| (format!("value {i}"), HOUR))).await.unwrap();
        let jobs = client.delayed_queue::<String, _>("b-jobs", StringCodec).unwrap().without_transfer();
        jobs.offer_with_id("job-7", &"the seventh".to_owned(), HOUR).await.unwrap();

        let search = Search::new("job-7").budget(500);
        let first = client.search(&search, None).await.unwrap();
        assert_eq!(first.matches.len(), 1, "{:?}", first.matches);
        let found = &first.matches[0];
        assert_eq!((found.queue.as_str(), found.by_id, found.text.as_str()), ("b-jobs", true, "the seventh"));
        assert_eq!(first.searched, 500, "the lookups are not values looked at");
        // Going on finds it no second time.
        let pages = all_pages(&client, &search).await;
        assert_eq!(pages.iter().map(|p| p.matches.len()).sum::<usize>(), 1);
    }
}

redis_test! {
    /// A job's dead letter keeps the id it was offered with: the search
    /// finds it by that id, and names it (the dashboard links it to the
    /// job's page).
    async fn a_jobs_dead_letter_is_found_by_its_id(client) {
        let dq = client.delayed_queue("dead-jobs", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
        let rq = client.reliable_queue("dead-jobs", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("inv-7", &"invoice".to_owned(), Duration::ZERO).await.unwrap();
        dq.offer(&"invoice".to_owned(), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        for _ in 0..2 {
            assert!(rq.take().await.unwrap().reject("no address").await.unwrap());
        }
        let pages = all_pages(&client, &Search::new("INV-7")).await;
        let matches: Vec<_> = pages.iter().flat_map(|p| &p.matches).collect();
        assert_eq!(matches.len(), 1, "{matches:?}");
        let dead = matches[0];
        assert_eq!(
            (dead.state, dead.position, dead.id.as_deref(), dead.reason.as_deref()),
            (ValueState::Dead, 0, Some("inv-7"), Some("rejected: no address"))
        );
        // The other dead letter has no id: found by its text, named by none.
        let both = all_pages(&client, &Search::new("invoice")).await;
        let ids: Vec<_> = both.iter().flat_map(|p| &p.matches).map(|m| m.id.as_deref()).collect();
        assert_eq!(ids, [Some("inv-7"), None]);
    }
}
