//! The evidence site in a real browser. `gauntlet site` renders the
//! committed run records, histories and figures in a scratch copy of
//! `reports/`, beside one more estate it has never seen; headless Chromium
//! (Debian's `chromium`) then loads every page from disk, as a reader with
//! no network would, and the test reads the DOM it built and looks at its
//! screenshots.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::Path;
use std::process::Command;

use gauntlet::browser::{Chromium, WIDTHS};
use serde_json::Value;

use crate::{finish, workspace};

/// The estate only this test has: a copy of a real record under another
/// name, with one stage failed and one errored.
const EXTRA: &str = "zz-published-root";

/// Every value of `attr` in a serialized DOM.
fn attrs(dom: &str, attr: &str) -> Vec<String> {
    let needle = format!(" {attr}=\"");
    dom.match_indices(&needle)
        .map(|(i, _)| {
            let rest = &dom[i + needle.len()..];
            rest[..rest.find('"').unwrap()].replace("&amp;", "&")
        })
        .collect()
}

/// The text of an element's content, tags dropped.
fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.trim().to_owned()
}

/// The cells of the matrix for stages that ran: their verdict words.
fn ran_cells(dom: &str) -> Vec<String> {
    dom.split("<td ")
        .skip(1)
        .filter(|cell| cell.split('>').next().unwrap().contains("data-ran=\"\""))
        .map(|cell| text(&format!("<td {}", &cell[..cell.find("</td>").unwrap()])))
        .collect()
}

/// The drawn marks (bars and points in the engine's colour) in each chart
/// figure of a DOM.
fn chart_marks(dom: &str) -> Vec<usize> {
    let engine = format!(
        "fill=\"#{:02X}{:02X}{:02X}\"",
        gauntlet::chart::ENGINE.0,
        gauntlet::chart::ENGINE.1,
        gauntlet::chart::ENGINE.2
    );
    dom.split("<figure class=\"chart\">")
        .skip(1)
        .map(|fig| {
            let fig = &fig[..fig.find("</figure>").unwrap()];
            assert!(fig.contains("<svg"), "a chart figure without an svg: {fig}");
            fig.split('<')
                .filter(|el| {
                    (el.starts_with("rect") || el.starts_with("circle")) && el.contains(&engine)
                })
                .count()
        })
        .collect()
}

/// Copy the records, histories and figures of `reports/` (not the pages
/// `gauntlet site` renders: those are what is under test, but the
/// plan-from-nothing page, which its script writes beside its figures), and
/// add the extra estate. Returns each estate's stages that ran.
fn scratch_reports(to: &Path) -> BTreeMap<String, usize> {
    let from = workspace().join("reports");
    fs::create_dir_all(to.join("history")).unwrap();
    let bench_page = from.join("plan-from-nothing.md");
    if bench_page.is_file() {
        fs::copy(&bench_page, to.join("plan-from-nothing.md")).unwrap();
    }
    let mut ran = BTreeMap::new();
    let mut base = None;
    for e in fs::read_dir(&from).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        let v: Value = serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap();
        if let Some(stages) = v["stages"].as_array() {
            let n = stages.iter().filter(|s| s["verdict"] != "not-run").count();
            ran.insert(v["estate"].as_str().unwrap().to_owned(), n);
            base = Some(v);
        }
    }
    for e in fs::read_dir(from.join("history")).unwrap().flatten() {
        fs::copy(e.path(), to.join("history").join(e.file_name())).unwrap();
    }
    // The kept broken runs, each toggle's red evidence, with their history.
    let breaks = from.join("breaks");
    if breaks.is_dir() {
        fs::create_dir_all(to.join("breaks/history")).unwrap();
        for e in fs::read_dir(&breaks).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "json") {
                fs::copy(e.path(), to.join("breaks").join(e.file_name())).unwrap();
            }
        }
        for e in fs::read_dir(breaks.join("history")).unwrap().flatten() {
            fs::copy(e.path(), to.join("breaks/history").join(e.file_name())).unwrap();
        }
    }
    let mut extra = base.expect("reports/ holds no run record");
    extra["estate"] = EXTRA.into();
    extra["exit_code"] = 1.into();
    let stages = extra["stages"].as_array_mut().unwrap();
    for s in stages.iter_mut() {
        match s["stage"].as_str().unwrap() {
            "Teardown" => {
                s["verdict"] = "fail".into();
                s["failed"] = serde_json::json!(["teardown-survivors"]);
                s["checks"] = serde_json::json!([
                    {"toggle": "teardown-survivors", "holds": false, "seen": "queue pre-1 is gone"}
                ]);
            }
            "StrictProfile" => {
                s["verdict"] = "error".into();
                s["detail"] = "terraform plan failed".into();
                s["failed"] = serde_json::json!([]);
                s["checks"] = serde_json::json!([]);
            }
            _ => {}
        }
    }
    let n = stages.iter().filter(|s| s["verdict"] != "not-run").count();
    ran.insert(EXTRA.to_owned(), n);
    fs::write(
        to.join(format!("{EXTRA}.json")),
        serde_json::to_string_pretty(&extra).unwrap(),
    )
    .unwrap();
    ran
}

/// `target`, a link's file part on `page` (both relative to the site's
/// top), as a path relative to the top.
fn resolve(page: &str, target: &str) -> String {
    let mut parts: Vec<&str> = page.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Every page the index leads to, by its path from the site's top, with
/// its DOM once loaded: a page that does not load or has no heading fails.
fn crawl(chromium: &Chromium, dir: &Path) -> BTreeMap<String, String> {
    let mut doms: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from(["index.html".to_owned()]);
    while let Some(page) = queue.pop_front() {
        if doms.contains_key(&page) {
            continue;
        }
        let dom = chromium
            .dump_dom(&dir.join(&page))
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(dom.contains("<h1>"), "{page} rendered no heading:\n{dom}");
        for target in attrs(&dom, "href") {
            let file = target.split('#').next().unwrap();
            if file.ends_with(".html") {
                queue.push_back(resolve(&page, file));
            }
        }
        doms.insert(page, dom);
    }

    doms
}

/// How many stages of an estate's record were measured.
fn measured(dir: &Path, estate: &str) -> usize {
    let text = fs::read_to_string(dir.join(format!("{estate}.json"))).unwrap();
    let record: Value = serde_json::from_str(&text).unwrap();
    record["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.get("measured").is_some())
        .count()
}

#[test]
fn the_site_renders_offline_and_every_link_resolves_in_chromium() {
    let chromium = Chromium::find().unwrap_or_else(|e| panic!("{e}"));
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let ran = scratch_reports(dir);
    let bench = dir.join("plan-from-nothing.json").is_file();

    let out = finish(
        Command::new(env!("CARGO_BIN_EXE_gauntlet"))
            .current_dir(workspace())
            .args(["site", "--reports-dir"])
            .arg(dir)
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);

    // Screenshots at a desktop and a phone width, of the index and of an
    // estate's page with a chart (else the first's), taken while the pages
    // are crawled.
    let charted = ran
        .keys()
        .find(|e| measured(dir, e) > 0)
        .or(ran.keys().next())
        .unwrap();
    let first = format!("{charted}.html");
    let (shots, doms) = std::thread::scope(|scope| {
        let shots = scope.spawn(|| {
            let mut taken = Vec::new();
            for page in ["index.html", first.as_str()] {
                for (width, size) in WIDTHS {
                    let png = dir.join("screens").join(format!("{page}-{width}.png"));
                    let shot = chromium.screenshot(&dir.join(page), size, &png);
                    taken.push((format!("{page} at {width}"), size, shot));
                }
            }
            taken
        });
        let doms = crawl(&chromium, dir);
        (shots.join().unwrap(), doms)
    });
    for (what, size, shot) in shots {
        let shot = shot.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!((shot.width, shot.height), size, "{what}");
    }

    let index = &doms["index.html"];
    // One matrix row per estate the directory holds.
    let rows: BTreeSet<String> = attrs(index, "data-estate").into_iter().collect();
    let estates: BTreeSet<String> = ran.keys().cloned().collect();
    assert_eq!(rows, estates);
    // A verdict in every cell that ran, red ones included.
    let cells = ran_cells(index);
    assert_eq!(cells.len(), ran.values().sum::<usize>());
    for c in &cells {
        assert!(
            ["pass", "fail", "error"].contains(&c.as_str()),
            "cell {c:?}"
        );
    }
    assert!(cells.iter().any(|c| c == "fail") && cells.iter().any(|c| c == "error"));
    // Every estate's page was reached from the index.
    for e in &estates {
        assert!(
            doms.contains_key(&format!("{e}.html")),
            "{e}.html not linked"
        );
    }

    // Every link resolves: to an element of the page, or a file that
    // exists and, with an anchor, holds that element.
    let ids: BTreeMap<&String, BTreeSet<String>> = doms
        .iter()
        .map(|(page, dom)| (page, attrs(dom, "id").into_iter().collect()))
        .collect();
    let mut checked = 0;
    for (page, dom) in &doms {
        assert!(!dom.contains("<script"), "{page} carries a script");
        let loads = attrs(dom, "src");
        assert!(
            loads.is_empty(),
            "{page} loads {loads:?}: a page loads nothing"
        );
        for target in attrs(dom, "href") {
            assert!(
                !target.contains("://"),
                "{page} links off the page's directory: {target}"
            );
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if file.is_empty() {
                page.clone()
            } else {
                resolve(page, file)
            };
            let path = dir.join(&file);
            assert!(path.is_file(), "{page}: dead link {target}");
            if let Some(anchor) = anchor {
                let found = match ids.get(&file) {
                    Some(ids) => ids.contains(anchor),
                    None => fs::read_to_string(&path)
                        .unwrap()
                        .contains(&format!("id=\"{anchor}\"")),
                };
                assert!(found, "{page}: {target} names no element");
            }
            checked += 1;
        }
    }
    // At least the matrix's: one a stage of each estate.
    let cells = estates.len() * gauntlet::stage::StageId::ALL.len();
    assert!(checked > cells, "only {checked} links");

    // At a phone's width and a desktop's, no page cuts a value: every
    // cell's content fits its cell and the window, every chart label is
    // drawn at 8 px or more, and no page scrolls sideways. The probe finds
    // a cut value where there is one.
    let cut = dir.join("cut.html");
    fs::write(
        &cut,
        "<!doctype html><html><body><table style=\"table-layout:fixed;width:120px\"><tr><td style=\"white-space:nowrap;overflow:hidden\">261 / 261 requests</td></tr></table><table><tr><td style=\"white-space:nowrap\">a value far too long to fit a phone's width, in a cell that will not wrap</td></tr></table><p style=\"width:600px\">a paragraph wider than the phone</p></body></html>",
    )
    .unwrap();
    let found = chromium.layout_faults(&cut, 390).unwrap();
    for fault in [
        "content wider than its cell",
        "a cell past the window edge",
        "the page scrolls sideways",
    ] {
        assert!(
            found.iter().any(|f| f.contains(fault)),
            "{fault}: {found:?}"
        );
    }
    let pages: Vec<&String> = doms.keys().collect();
    let faults: Vec<String> = std::thread::scope(|scope| {
        let chromium = &chromium;
        let runs: Vec<_> = WIDTHS
            .iter()
            .map(|&(width, (px, _))| {
                let pages = &pages;
                scope.spawn(move || {
                    pages
                        .iter()
                        .flat_map(|page| {
                            chromium
                                .layout_faults(&dir.join(page), px)
                                .unwrap_or_else(|e| panic!("{page}: {e}"))
                                .into_iter()
                                .map(move |f| format!("{page} at {width} width: {f}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        runs.into_iter().flat_map(|r| r.join().unwrap()).collect()
    });
    assert!(faults.is_empty(), "{}", faults.join("\n"));

    // Charts: the plan-from-nothing figures on the index, each measured
    // estate's stages on its page, none of them empty.
    let marks = chart_marks(index);
    assert_eq!(marks.len(), if bench { 2 } else { 0 }, "{marks:?}");
    assert!(marks.iter().all(|&m| m >= 2), "{marks:?}");
    for e in &estates {
        let measured = measured(dir, e);
        let marks = chart_marks(&doms[&format!("{e}.html")]);
        if measured == 0 {
            assert!(marks.is_empty(), "{e}: {marks:?}");
        } else {
            // A bar per measured stage and the legend's swatch.
            assert_eq!(marks, [measured + 1], "{e}");
        }
    }
}
