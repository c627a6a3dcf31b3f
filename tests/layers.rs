//! The crate's layers, checked: every `crate::` path in `src/` may only point
//! at a top-level module of a lower layer, so no import circle can form and
//! no module reaches up into `Client`. See ARCHITECTURE.md. (The codecs, the
//! dashboard and the CLI are crates of their own: the compiler keeps them to
//! what they depend on.)
//!
//! Reads the source text, no build needed: a path through a re-export of
//! `lib.rs` (`crate::Client`) counts as a path into the module it re-exports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules, lowest layer first; modules of one layer may not use
/// each other.
const LAYERS: &[&[&str]] = &[
    &["error", "telemetry"],
    &["wire"],
    &["connection"],
    &["transfer"],
    &["queue"],
    &["worker", "schedule"],
    &["client"],
];

/// Paths a layer must not name: the wire format does no I/O.
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "wire",
        &["fred", "tokio", "tokio_util", "std::net", "std::fs", "std::process"],
    ),
    ("error", &["tokio"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// A `crate::` reference found in the source.
#[derive(Debug)]
struct Use {
    from: String,
    to: String,
    at: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "bin") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a line, without its `//` comment (doc links are not uses); a
/// `//` inside a string literal is kept.
fn code(line: &str) -> &str {
    let mut in_string = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes[i + 1] == b'/' => return &line[..i],
            _ => {}
        }
        i += 1;
    }
    line
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// First segments of the paths after a `crate::`: `a` for `crate::a::b`,
/// `a` and `c` for `crate::{a::b, c}` (groups may span lines: `rest` is the
/// rest of the file from there).
fn first_segments(rest: &str) -> Vec<String> {
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 1;
        let mut item_start = true;
        let mut names = Vec::new();
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                ',' if depth == 1 => item_start = true,
                c if c.is_whitespace() => {}
                _ if item_start && depth == 1 => {
                    names.push(ident(&group[i..]).to_owned());
                    item_start = false;
                }
                _ => {}
            }
        }
        names
    } else {
        vec![ident(rest).to_owned()]
    }
}

/// Names `lib.rs` re-exports, mapped to the top-level module they come from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let text: String = lib.lines().map(code).collect::<Vec<_>>().join("\n");
    for statement in text.split(';') {
        let Some(at) = statement.find("pub use ") else { continue };
        let path = statement[at + "pub use ".len()..].trim();
        let path = path.trim_start_matches("::");
        let path = path
            .strip_prefix("self::")
            .or_else(|| path.strip_prefix("crate::"))
            .unwrap_or(path);
        // `pub use crate::{a::B, C}`: each item names its own module.
        if let Some(group) = path.strip_prefix('{') {
            for item in group.trim_end_matches('}').split(',') {
                let item = item.trim();
                let name = item.split(" as ").last().unwrap().trim();
                let name = name.rsplit("::").next().unwrap();
                let module = if item.contains("::") {
                    Some(ident(item).to_owned())
                } else {
                    names.get(name).cloned()
                };
                if let (false, Some(module)) = (name.is_empty(), module) {
                    names.insert(name.to_owned(), module);
                }
            }
            continue;
        }
        let module = ident(path).to_owned();
        let items = match path.find('{') {
            Some(open) => path[open + 1..].trim_end_matches('}').to_owned(),
            None => path.rsplit("::").next().unwrap().to_owned(),
        };
        for item in items.split(',') {
            let name = item.split(" as ").last().unwrap().trim();
            if !name.is_empty() {
                names.insert(name.to_owned(), module.clone());
            }
        }
    }
    names
}

fn uses(src: &Path) -> Vec<Use> {
    let reexported = reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let from = relative.components().next().unwrap().as_os_str().to_string_lossy();
        let from = from.trim_end_matches(".rs").to_owned();
        if from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code_only: Vec<&str> = text.lines().map(code).collect();
        let joined = code_only.join("\n");
        let mut line_starts = vec![0];
        line_starts.extend(joined.match_indices('\n').map(|(i, _)| i + 1));
        // The file's module path below src/: `queue/delayed/mod.rs` is queue::delayed.
        let mut module: Vec<String> = relative
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        assert!(
            !joined.contains("crate as "),
            "{}: an alias of `crate` hides paths from this check",
            relative.display()
        );
        let mut paths = Vec::new(); // (offset, rest of the text after the path's root)
        for (at, _) in joined.match_indices("crate::") {
            // `$crate::` (a macro) is crate:: too; `some_crate::` is another crate.
            if joined[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            paths.push((at, &joined[at + "crate::".len()..]));
        }
        for (at, _) in joined.match_indices("super::") {
            if joined[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue; // counted with the `super::` it follows
            }
            let mut rest = &joined[at..];
            let mut up = 0;
            while let Some(next) = rest.strip_prefix("super::") {
                rest = next;
                up += 1;
            }
            // Only a `super::` that climbs to the crate root leaves the top-level module.
            if up >= module.len() {
                paths.push((at, rest));
            }
        }
        for (at, rest) in paths {
            let line = line_starts.partition_point(|&start| start <= at);
            for name in first_segments(rest) {
                let to = if layer_of(&name).is_some() {
                    name.clone()
                } else if let Some(module) = reexported.get(&name) {
                    module.clone()
                } else {
                    panic!(
                        "{}:{line}: `crate::{name}` names no top-level module and no re-export of lib.rs",
                        relative.display()
                    );
                };
                found.push(Use {
                    from: from.clone(),
                    to,
                    at: format!("{}:{line}", relative.display()),
                });
            }
        }
        for (layer, forbidden) in FORBIDDEN {
            if from != *layer {
                continue;
            }
            for krate in *forbidden {
                for (n, line) in code_only.iter().enumerate() {
                    // Tests may use one pure helper: fred's key-slot function.
                    if line.contains("fred::util::redis_keyslot") {
                        continue;
                    }
                    let named = |pattern: &str| {
                        line.match_indices(pattern)
                            .any(|(i, _)| !line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
                    };
                    let hit = named(&format!("{krate}::"))
                        || named(&format!("use {krate} "))
                        || named(&format!("use {krate};"))
                        || named(&format!("extern crate {krate}"));
                    assert!(
                        !hit,
                        "{}:{}: `{layer}` must not use `{krate}`",
                        relative.display(),
                        n + 1
                    );
                }
            }
        }
    }
    found
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut top_level = BTreeSet::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if name != "lib" && name != "bin" {
            top_level.insert(name);
        }
    }
    for module in &top_level {
        assert!(
            layer_of(module).is_some(),
            "src/{module} is in no layer: add it to LAYERS in tests/layers.rs and to ARCHITECTURE.md"
        );
    }
    let uses = uses(&src);
    assert!(
        uses.len() > 50,
        "found only {} crate:: paths; is the parser broken?",
        uses.len()
    );
    let upward: Vec<String> = uses
        .iter()
        .filter(|u| u.from != u.to && layer_of(&u.to) >= layer_of(&u.from))
        .map(|u| format!("{}: `{}` uses `{}`", u.at, u.from, u.to))
        .collect();
    assert!(
        upward.is_empty(),
        "modules may only use lower layers (see LAYERS):\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_import_circle_between_top_level_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for u in uses(&src).into_iter().filter(|u| u.from != u.to) {
        edges.entry(u.from).or_default().insert(u.to);
    }
    // Depth-first search for a back edge; report the circle it closes.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut circle = path[start..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        let circle = visit(node, &edges, &mut Vec::new(), &mut done);
        assert!(circle.is_none(), "import circle: {}", circle.unwrap().join(" -> "));
    }
}

#[test]
fn the_parser_sees_groups_reexports_and_skips_comments() {
    assert_eq!(first_segments("{a::b, c, d::{e, f}} x"), ["a", "c", "d"]);
    assert_eq!(first_segments("queue::Core;"), ["queue"]);
    assert_eq!(code("let x = 1; // crate::client"), "let x = 1; ");
    assert_eq!(
        code(r#"let u = "redis://h"; crate::wire"#),
        r#"let u = "redis://h"; crate::wire"#
    );
    let map = reexports(
        "pub use client::{Client, ClientBuilder};\npub use wire::codec::{self as c, Codec};\n// pub use x::Y;",
    );
    assert_eq!(map.get("Client").map(String::as_str), Some("client"));
    assert_eq!(map.get("c").map(String::as_str), Some("wire"));
    assert_eq!(map.get("Y"), None);
}

/// The layers a module's doc says it may use: the names in backquotes after
/// "May use:" up to the next `;` or `.` (none: "May use: nothing."), or
/// every lower layer for "May use every layer below".
fn declared_uses(doc: &str, module: &str) -> Option<BTreeSet<String>> {
    let text: String = doc
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            // The module doc, or a plain comment for a public module whose
            // doc is for users.
            l.strip_prefix("//!")
                .or_else(|| l.strip_prefix("//").filter(|r| !r.starts_with('/')))
        })
        .collect::<Vec<_>>()
        .join(" ");
    let at = text.find("May use")?;
    let rest = &text[at + "May use".len()..];
    if rest.trim_start().starts_with("every layer below") {
        let own = layer_of(module)?;
        return Some(
            LAYERS[..own]
                .iter()
                .flat_map(|l| l.iter().map(|m| m.to_string()))
                .collect(),
        );
    }
    let end = rest.find([';', '.']).unwrap_or(rest.len());
    let sentence = &rest[..end];
    Some(sentence.split('`').skip(1).step_by(2).map(str::to_owned).collect())
}

#[test]
fn each_layer_says_what_it_may_use_and_uses_exactly_that() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut used: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for u in uses(&src).into_iter().filter(|u| u.from != u.to) {
        used.entry(u.from).or_default().insert(u.to);
    }
    let mut wrong = Vec::new();
    for layer in LAYERS.iter().flat_map(|l| l.iter()) {
        let dir = src.join(layer).join("mod.rs");
        let file = if dir.is_file() {
            dir
        } else {
            src.join(format!("{layer}.rs"))
        };
        let doc = std::fs::read_to_string(&file).unwrap();
        let actual = used.remove(*layer).unwrap_or_default();
        let Some(declared) = declared_uses(&doc, layer) else {
            wrong.push(format!("{}: no \"May use: `...`\" in its module doc", file.display()));
            continue;
        };
        let every_below = doc.contains("May use every layer below");
        let undeclared: Vec<_> = actual.difference(&declared).collect();
        let unused: Vec<_> = declared.difference(&actual).collect();
        if !undeclared.is_empty() || (!unused.is_empty() && !every_below) {
            wrong.push(format!(
                "{}: uses {undeclared:?} without saying so; says {unused:?} but does not use it",
                file.display()
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}
