//! Renderings of a [`RunRecord`]: `reports/<estate>.json` and the evidence
//! page `reports/<estate>.md`, in the seed pages' form, with what changed
//! since the estate's last run and where each stage's time went. The HTML
//! page and the index are the site's (`site`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::chart::ChartError;
use crate::conditions::Conditions;
use crate::evidence::{Check, Disagrees, RunRecord, StageRecord, Verdict};
use crate::freshness::{self, Freshness};
use crate::history::{self, HistoryError, Since};
use crate::site;
use crate::stage::Toggle;

/// `1m34s`, `12s`, `0.8s`: durations as the pages print them.
pub fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        format!("{s:.1}s")
    } else if s < 60.0 {
        format!("{}s", s.round() as u64)
    } else {
        let whole = s.round() as u64;
        format!("{}m{}s", whole / 60, whole % 60)
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// What a reproduction needs, in Markdown.
pub const NEEDS: &str = "Needs stock terraform on PATH (or TERRAFORM), the aws provider in a filesystem mirror or plugin cache, and Python 3 with venv; the run installs the pinned moto and AWS CLI into a project-local virtualenv, and runs the `choudoufu` built beside the gauntlet (`cargo build -p engine --bin choudoufu` first) or the one `CHOUDOUFU` names.";

/// What the BREAK toggles are, in Markdown.
pub const BREAKS: &str = "`BREAK_<NAME>=1` or `--break <name>` corrupts one assertion on purpose, to show it is load-bearing: under its toggle the stage must fail (`cargo run -p gauntlet -- breaks` lists them).";

/// Where the toggle catalogue lives, relative to `reports/`, without its
/// extension.
pub const TOGGLES_PAGE: &str = "toggles";

/// Where the pages of broken runs live, relative to `reports/`: runs with
/// BREAK toggles on, kept so that each toggle's red stage can be read.
pub const BREAKS_DIR: &str = "breaks";

/// For each toggle, the first broken run (by estate) whose stage failed on
/// that toggle's assertion: the red evidence the catalogue links.
pub fn red_runs<'a>(breaks: impl IntoIterator<Item = &'a RunRecord>) -> BTreeMap<Toggle, String> {
    let mut red = BTreeMap::new();
    for r in breaks {
        for s in &r.stages {
            for c in s.checks.iter().filter(|c| !c.holds) {
                red.entry(c.toggle).or_insert_with(|| r.estate.clone());
            }
        }
    }
    red
}

/// The BREAK toggles as a Markdown table: each one's stage, the condition
/// its assertion holds the stage to, how the toggle breaks it, and the
/// broken run whose page shows that stage red (`red`, from [`red_runs`]).
pub fn toggles_markdown(red: &BTreeMap<Toggle, String>) -> String {
    let mut md = String::from(
        "| Toggle | Stage | Passes when | What the toggle corrupts | Red under it |\n|---|---|---|---|---|\n",
    );
    for t in Toggle::ALL {
        let shown = red.get(&t).map_or_else(
            || "no broken run kept".to_owned(),
            |e| format!("[{e}]({BREAKS_DIR}/{e}.md#{})", t.stage().slug()),
        );
        let _ = writeln!(
            md,
            "| <a id=\"{0}\"></a>`{0}` (`{1}=1`) | {2} | {3} | {4} | {shown} |",
            t.name(),
            t.env(),
            t.stage().title(),
            cell(t.bar()),
            cell(t.what())
        );
    }
    md
}

/// What the catalogue page says before its table.
pub const TOGGLES_INTRO: &str = "Every assertion a stage makes is one row: the condition the stage passes only when it holds, and the toggle that corrupts what it checks. The suite runs each toggle and requires its stage to fail; the last column links a kept run with the toggle on, at the stage it turned red.";

/// The toggle catalogue's own page, in Markdown.
pub fn toggles_page(red: &BTreeMap<Toggle, String>) -> String {
    format!(
        "# The BREAK toggles\n\n{TOGGLES_INTRO}\n\n{BREAKS}\n\n{}",
        toggles_markdown(red)
    )
}

/// How long a tool ran during a stage: `1m34s`, or `–` when it did not.
pub fn ran_for(ms: u64) -> String {
    if ms == 0 {
        "–".into()
    } else {
        human(Duration::from_millis(ms))
    }
}

/// One assertion as a list item: whether it held, the condition, its
/// toggle (linked to the catalogue) and what was seen.
fn check_markdown(c: &Check, up: &str) -> String {
    let word = if c.holds { "holds" } else { "**FAILED**" };
    format!(
        "- {word}: passes when {} ([`{1}`]({up}{TOGGLES_PAGE}.md#{1})). Seen: {2}",
        c.toggle.bar(),
        c.toggle.name(),
        c.seen.replace('\n', " ")
    )
}

/// The provenance line: commit, start, exit code, conditions, versions.
pub fn provenance(r: &RunRecord) -> String {
    let v = &r.versions;
    let pin = if v.terraform.is_empty() {
        "not found".to_owned()
    } else if v.terraform == v.terraform_pin {
        format!("{} (matches the pin)", v.terraform)
    } else {
        format!("{}. Stale: the pin is {}", v.terraform, v.terraform_pin)
    };
    format!(
        "Run at commit {} on {}, exit code {}; {}. Substrate moto {} (two servers on loopback, one per twin), witness aws-cli {}. Oracle: stock terraform {pin}, hashicorp/aws provider {}. Engine: choudoufu {}.",
        r.commit,
        r.started_at,
        r.exit_code,
        r.conditions.describe(),
        or_unknown(&v.emulator),
        or_unknown(&v.witness),
        or_unknown(&v.aws_provider),
        v.engine
    )
}

/// What kind of estate a page is of, in words a visitor can follow.
pub fn kind(r: &RunRecord) -> String {
    let set = match r.set.as_str() {
        "growing" => "a hand-written estate of this project's own".to_owned(),
        "corpus" => "a published root, run as its users have it".to_owned(),
        "root" => "a root given on the command line (`run --root`)".to_owned(),
        other => format!("set {other}"),
    };
    let lane = match r.lane.as_str() {
        "aws" => "the aws provider against the moto emulator".to_owned(),
        other => other.to_owned(),
    };
    format!("Kind: {set}. Lane: {lane}.")
}

/// A stage's detail after its verdict word: a stage not run says why
/// without saying "not run" twice.
pub fn why(s: &StageRecord) -> &str {
    s.detail.strip_prefix("not run: ").unwrap_or(&s.detail)
}

/// The stage's title with its headline mark.
pub fn titled(s: &StageRecord) -> String {
    if s.headline {
        s.title.clone()
    } else {
        format!("{} (not a headline stage)", s.title)
    }
}

/// The Markdown evidence page; `since` is what changed since the last run
/// of like conditions, `fresh` whether the run still speaks for the code.
/// Each stage's verdict is the one its assertions give.
pub fn markdown(r: &RunRecord, since: Option<&Since>, fresh: &Freshness, up: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Evidence · {}\n", r.estate);
    let _ = writeln!(md, "{}\n", r.description);
    if let Some(source) = &r.source {
        let _ = writeln!(md, "{}\n", source_line(source));
    }
    let _ = writeln!(md, "{}\n", kind(r));
    let banner = fresh.banner(r);
    if !banner.is_empty() {
        let _ = writeln!(md, "> {banner}\n");
    }
    let _ = writeln!(md, "**{}**\n", r.verdict_line());
    if !r.breaks.is_empty() {
        let _ = writeln!(
            md,
            "BREAK toggles on: {}. This run corrupts those assertions on purpose.\n",
            r.breaks.join(", ")
        );
    }
    if let Some(e) = &r.error {
        let _ = writeln!(md, "```\n{}\n```\n", e.trim());
    }
    let _ = writeln!(md, "{}\n", provenance(r));
    md.push_str("| Stage | Verdict | Duration | What it did |\n|---|---|---|---|\n");
    for s in &r.stages {
        let duration = s
            .duration_ms
            .map(|ms| human(Duration::from_millis(ms)))
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "| [{}](#{}) | {} | {} | {} |",
            cell(&titled(s)),
            s.stage.slug(),
            s.given().word(),
            duration,
            cell(&s.detail)
        );
    }
    let _ = writeln!(md, "\n{PASSES}: [the toggles]({up}{TOGGLES_PAGE}.md).\n");
    md.push_str("## Each stage\n");
    for s in &r.stages {
        let _ = writeln!(md, "\n### {}\n", titled(s));
        let duration = s
            .duration_ms
            .map(|ms| format!(" in {}", human(Duration::from_millis(ms))))
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "<a id=\"{}\"></a>**{}**{duration}. {}\n",
            s.stage.slug(),
            s.given().word(),
            why(s).replace('\n', " ")
        );
        for c in &s.checks {
            let _ = writeln!(md, "{}", check_markdown(c, up));
        }
    }
    md.push_str("\n## Since the last run\n\n");
    md.push_str(&since_markdown(&r.conditions, since));
    if r.stages.iter().any(|s| s.measured.is_some()) {
        md.push_str("\n## Where each stage's time went\n\n");
        let _ = writeln!(
            md,
            "![Each stage's time, choudoufu beside stock terraform]({})\n",
            site::stage_chart_path(&r.estate)
        );
        md.push_str("| Stage | choudoufu | stock terraform | requests, estate twin | requests, oracle twin |\n|---|---|---|---|---|\n");
        for s in &r.stages {
            if let Some(m) = &s.measured {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} |",
                    s.title,
                    ran_for(m.engine_ms),
                    ran_for(m.stock_ms),
                    m.estate_requests,
                    m.oracle_requests
                );
            }
        }
        md.push_str("\nchoudoufu and stock terraform: the wall time each ran during the stage, with the provider it runs (overlapping runs counted once; – where it did not run). Requests: what moto served on each twin during the stage, the witness's reads included.\n");
    }
    let t = &r.timing;
    let _ = writeln!(
        md,
        "\nTotal run time {}: terraform and its provider {}, choudoufu and its provider {}, emulator start {}, witness {}, provisioning {}, the harness itself {} ({:.1}%).\n",
        human(t.total),
        human(t.terraform),
        human(t.engine),
        human(t.emulator),
        human(t.witness),
        human(t.provisioning),
        human(t.harness),
        t.harness_share() * 100.0
    );
    if !r.plans.is_empty() {
        md.push_str("## Plans\n\n");
        for p in &r.plans {
            let _ = writeln!(
                md,
                "<details><summary>{}: {} on the {} twin: {}</summary>\n\n```\n{}\n```\n\n</details>\n",
                p.stage.title(),
                p.tool,
                p.twin,
                p.summary,
                p.text.trim_end()
            );
        }
    }
    let _ = writeln!(md, "## Reproduce it\n\n```\n{}\n```\n", r.reproduce);
    let _ = writeln!(
        md,
        "{NEEDS}\n\n{BREAKS} Every toggle, its stage and its condition: [the toggles]({up}{TOGGLES_PAGE}.md)."
    );
    md
}

/// How a page reads its stage list, before the link to the toggles.
pub const PASSES: &str = "A stage passes when every condition listed under it holds, and fails when one does not; each condition is one assertion, with the toggle that proves it can fail";

/// Where a corpus estate's root comes from, in words.
pub fn source_line(s: &crate::corpus::Source) -> String {
    format!(
        "Root: {}. The gauntlet brings the repository's tree at that commit; nothing of it is kept in this project.",
        s.describe()
    )
}

/// What changed since the last run of like conditions, as Markdown.
fn since_markdown(conditions: &Conditions, since: Option<&Since>) -> String {
    let (previous, changes, passed_over) = match since {
        None => return "No earlier run in this estate's history to compare with.\n".into(),
        Some(Since::NoneAlike { earlier }) => {
            return format!("{}\n", history::none_alike(conditions, *earlier))
        }
        Some(Since::Like {
            previous,
            changes,
            passed_over,
        }) => (previous, changes, *passed_over),
    };
    let mut md = history::since_lead(conditions, previous, passed_over);
    if changes.is_empty() {
        md.push_str(
            " no stage turned red or green, and no stage's duration moved by more than a quarter.\n",
        );
    } else {
        md.push_str("\n\n");
        for c in changes {
            let _ = writeln!(md, "- {c}.");
        }
    }
    md
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() {
        "unknown"
    } else {
        s
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error("{estate}: {why}; no page is written over it")]
    Disagrees { estate: String, why: Disagrees },
}

fn put(path: &Path, text: &str) -> Result<(), PageError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|source| PageError::Io {
            path: dir.to_owned(),
            source,
        })?;
    }
    fs::write(path, text).map_err(|source| PageError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Write `<dir>/<estate>.json` and the run's pages (see [`pages`]), with
/// what changed since the run before it in the estate's history.
pub fn write(dir: &Path, r: &RunRecord) -> Result<(PathBuf, PathBuf), PageError> {
    let json = dir.join(format!("{}.json", r.estate));
    let text = serde_json::to_string_pretty(r).map_err(|e| PageError::Io {
        path: json.clone(),
        source: e.into(),
    })?;
    put(&json, &(text + "\n"))?;
    let lines = history::read(dir, &r.estate)?;
    let md = pages(dir, r, &lines, "")?;
    Ok((json, md))
}

/// Write a run's pages from its record and its estate's history:
/// `<dir>/<estate>.md`, `<dir>/<estate>.html` and, when its stages were
/// measured, the chart of their time. Returns the Markdown page's path.
///
/// `up` leads from `dir` to the site's top, where the index and the toggle
/// catalogue are: empty for an estate's own page, `../` for a page of a
/// broken run under `breaks/`.
pub fn pages(
    dir: &Path,
    r: &RunRecord,
    lines: &[history::Line],
    up: &str,
) -> Result<PathBuf, PageError> {
    for s in &r.stages {
        s.agrees().map_err(|why| PageError::Disagrees {
            estate: r.estate.clone(),
            why,
        })?;
    }
    let since = history::since(lines, r);
    let fresh = freshness::of(dir, r);
    let md = dir.join(format!("{}.md", r.estate));
    put(&md, &markdown(r, since.as_ref(), &fresh, up))?;
    let chart = site::stage_chart(r)?;
    if let Some(svg) = &chart {
        put(&dir.join(site::stage_chart_path(&r.estate)), svg)?;
    }
    let html = site::estate_html(r, lines, since.as_ref(), &fresh, chart.as_deref(), up);
    put(&dir.join(format!("{}.html", r.estate)), &html)?;
    Ok(md)
}

/// The last run of an estate, if its record is readable.
pub fn last(dir: &Path, estate: &str) -> Option<RunRecord> {
    let text = fs::read_to_string(dir.join(format!("{estate}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// Where the run's wall time went, as a table: each category's time and
/// share of the total.
pub fn timing_table(r: &RunRecord) -> String {
    let t = &r.timing;
    let share = |d: Duration| {
        if t.total.is_zero() {
            "0.0%".to_owned()
        } else {
            format!("{:.1}%", 100.0 * d.as_secs_f64() / t.total.as_secs_f64())
        }
    };
    let rows = [
        ("terraform and its provider", t.terraform),
        ("choudoufu and its provider", t.engine),
        ("emulator start", t.emulator),
        ("witness (AWS CLI)", t.witness),
        ("provisioning", t.provisioning),
        ("the harness itself", t.harness),
        ("total", t.total),
    ];
    let mut b = tabled::builder::Builder::default();
    b.push_record(["where", "seconds", "share"]);
    for (what, d) in rows {
        b.push_record([what.to_owned(), format!("{:.1}", d.as_secs_f64()), share(d)]);
    }
    b.build()
        .with(tabled::settings::Style::markdown())
        .to_string()
}

/// `2 pass, 15 not run`: a stage tally for `gauntlet list`.
pub fn tally(r: &RunRecord) -> String {
    let mut parts = Vec::new();
    for v in [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Error,
        Verdict::NotRun,
    ] {
        let n = r.stages.iter().filter(|s| s.verdict == v).count();
        if n > 0 {
            parts.push(format!("{n} {}", v.word()));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::clock::Breakdown;
    use crate::evidence::{StageRecord, Versions};
    use crate::stage::StageId;

    pub(crate) fn record() -> RunRecord {
        let mut stages: Vec<StageRecord> = StageId::ALL
            .iter()
            .map(|s| StageRecord::not_run(*s, ""))
            .collect();
        stages[0].verdict = Verdict::Pass;
        stages[0].duration_ms = Some(94_000);
        stages[0].detail = "17 objects | on both twins".into();
        stages[0].checks = vec![
            Check {
                toggle: Toggle::ColdState,
                holds: true,
                seen: "17 instances in each state".into(),
            },
            Check {
                toggle: Toggle::ColdMarkers,
                holds: true,
                seen: "no marker".into(),
            },
        ];
        RunRecord {
            estate: "e".into(),
            description: "An estate.".into(),
            set: "growing".into(),
            lane: "aws".into(),
            stages,
            commit: "abc".into(),
            started_at: "2026-12-02T00:00:00Z".into(),
            exit_code: 0,
            conditions: crate::conditions::Conditions {
                profile: "debug".into(),
                cores: 2,
                load: 0.5,
                alongside: 0,
            },
            versions: Versions {
                emulator: "5.2.5".into(),
                witness: "1.46.3".into(),
                terraform: "1.11.4".into(),
                terraform_pin: "1.11.4".into(),
                aws_provider: "5.100.0".into(),
                engine: "0.1.0".into(),
            },
            timing: Breakdown {
                total: Duration::from_secs(100),
                terraform: Duration::from_secs(90),
                harness: Duration::from_secs(1),
                ..Breakdown::default()
            },
            breaks: vec![],
            plans: vec![],
            error: None,
            reproduce: "cargo run -p gauntlet -- run e".into(),
            source: None,
        }
    }

    #[test]
    fn the_page_has_the_seed_form() {
        let md = markdown(&record(), None, &Freshness::Current, "");
        assert!(md.contains("| Stage | Verdict | Duration | What it did |"));
        assert!(
            md.contains(
                "| [Cold deploy](#cold-deploy) | pass | 1m34s | 17 objects \\| on both twins |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| [Strict profile (not a headline stage)](#strict-profile) | not run |")
        );
        // Each stage lists its conditions, linked to the toggle catalogue.
        assert!(md.contains("<a id=\"cold-deploy\"></a>**pass** in 1m34s. 17 objects | on both twins\n\n- holds: passes when each twin's terraform.tfstate holds exactly the instances stock's plan created ([`cold-state`](toggles.md#cold-state)). Seen: 17 instances in each state\n"), "{md}");
        assert!(md.contains("debug build, 2 cores, run alone, load average 0.50 at the start"));
        assert!(md.contains("Clear so far. Every stage that ran passes; 12 of 13"));
        assert!(md.contains("terraform 1.11.4 (matches the pin)"));
        assert!(md.contains("the harness itself 1.0s (1.0%)"));
        assert!(md.contains("No earlier run in this estate's history"));
        // Unmeasured stages draw no chart.
        assert!(!md.contains("Where each stage's time went"));
        let reproduce = md.split("## Reproduce it").nth(1).unwrap();
        assert!(reproduce.contains("cargo run -p gauntlet -- run e"));
        assert!(reproduce.contains("[the toggles](toggles.md)"));
        // The catalogue is a page of its own, not a table on every page.
        assert!(!md.contains("BREAK_COLD_MARKERS=1"));
        let none = BTreeMap::new();
        assert!(toggles_page(&none).contains("| <a id=\"cold-markers\"></a>`cold-markers` (`BREAK_COLD_MARKERS=1`) | Cold deploy | no object on either twin carries an estate marker | stamps one declared queue"));
        assert!(toggles_page(&none).contains("| no broken run kept |"));
    }

    #[test]
    fn a_page_never_says_pass_over_a_condition_that_failed() {
        let d = tempfile::tempdir().unwrap();
        let mut r = record();
        // An assertion fails: the page says fail and names the condition.
        r.stages[0].checks[1].holds = false;
        r.stages[0].checks[1].seen = "1 object carries tofu-estate".into();
        r.stages[0].verdict = Verdict::Fail;
        r.stages[0].failed = vec!["cold-markers".into()];
        let (_, md) = write(d.path(), &r).unwrap();
        let md = fs::read_to_string(md).unwrap();
        // The catalogue links the run whose page shows it red.
        let red = red_runs([&r]);
        assert_eq!(red.len(), 1);
        assert!(toggles_page(&red).contains("| [e](breaks/e.md#cold-deploy) |"));
        assert!(
            md.contains("| [Cold deploy](#cold-deploy) | fail |"),
            "{md}"
        );
        assert!(md.contains("- **FAILED**: passes when no object on either twin carries an estate marker ([`cold-markers`](toggles.md#cold-markers)). Seen: 1 object carries tofu-estate"), "{md}");
        let html = fs::read_to_string(d.path().join("e.html")).unwrap();
        assert!(html.contains("<li class=\"fail\"><strong>FAILED</strong>: passes when no object on either twin carries an estate marker"), "{html}");
        // A record that says pass over it is refused, and no page written.
        r.stages[0].verdict = Verdict::Pass;
        let e = pages(d.path(), &r, &[], "").unwrap_err().to_string();
        assert_eq!(e, "e: Cold deploy: the record says pass but its assertions give fail; no page is written over it");
        // So is a fail list that is not the failed assertions, and a pass
        // with no assertion behind it.
        r.stages[0].verdict = Verdict::Fail;
        r.stages[0].failed = vec!["cold-state".into()];
        assert!(pages(d.path(), &r, &[], "").is_err());
        r.stages[0].verdict = Verdict::Pass;
        r.stages[0].failed.clear();
        r.stages[0].checks.clear();
        let e = pages(d.path(), &r, &[], "").unwrap_err().to_string();
        assert!(
            e.contains("the record says pass but its assertions give nothing"),
            "{e}"
        );
    }

    #[test]
    fn a_corpus_page_names_its_repository_commit_and_folder() {
        let d = tempfile::tempdir().unwrap();
        let mut r = record();
        r.source = Some(crate::corpus::Source {
            git: "https://github.com/terraform-aws-modules/terraform-aws-vpc".into(),
            rev: "7c1f791efd61f326ed6102d564d1a65d1eceedf0".into(),
            path: "examples/simple".into(),
            tag: Some("v5.21.0".into()),
        });
        let (json, md) = write(d.path(), &r).unwrap();
        let md = fs::read_to_string(md).unwrap();
        assert!(
            md.contains("Root: https://github.com/terraform-aws-modules/terraform-aws-vpc, commit 7c1f791efd61f326ed6102d564d1a65d1eceedf0 (tag v5.21.0), folder examples/simple."),
            "{md}"
        );
        let back: RunRecord = serde_json::from_str(&fs::read_to_string(json).unwrap()).unwrap();
        assert_eq!(back.source, r.source);
        let html = crate::site::estate_html(&r, &[], None, &Freshness::Current, None, "");
        assert!(
            html.contains("commit 7c1f791efd61f326ed6102d564d1a65d1eceedf0"),
            "{html}"
        );
        let index = crate::site::render(d.path()).unwrap();
        let index = fs::read_to_string(index).unwrap();
        assert!(index.contains("folder examples/simple."), "{index}");
    }

    #[test]
    fn a_measured_run_in_a_history_shows_its_time_and_changes() {
        let d = tempfile::tempdir().unwrap();
        let mut r = record();
        history::append(d.path(), &r).unwrap();
        r.started_at = "2026-12-03T00:00:00Z".into();
        r.stages[0].duration_ms = Some(30_000);
        r.stages[0].measured = Some(crate::evidence::Measured {
            engine_ms: 0,
            stock_ms: 28_000,
            estate_requests: 120,
            oracle_requests: 118,
        });
        r.stages[1].verdict = Verdict::Fail;
        r.stages[1].duration_ms = Some(1_000);
        history::append(d.path(), &r).unwrap();
        let (_, md) = write(d.path(), &r).unwrap();
        let md = fs::read_to_string(md).unwrap();
        assert!(
            md.contains("Against the last run of like conditions (debug build, 2 cores, run alone), at commit abc on 2026-12-02T00:00:00Z:"),
            "{md}"
        );
        assert!(md.contains("- Cold deploy took 30s, 68% shorter than the 1m34s before."));
        assert!(md.contains("| Cold deploy | – | 28s | 120 | 118 |"), "{md}");
        assert!(md.contains("](charts/e-stages.svg)"));
        assert!(d.path().join("charts/e-stages.svg").is_file());
        assert!(d.path().join("e.html").is_file());
    }

    #[test]
    fn a_failing_stage_turns_the_page_red_and_the_record_round_trips() {
        let mut r = record();
        r.stages[10].verdict = Verdict::Fail;
        r.stages[10].failed = vec!["teardown-removed".into()];
        r.stages[10].checks = vec![Check {
            toggle: Toggle::TeardownRemoved,
            holds: false,
            seen: "one parameter is back".into(),
        }];
        assert_eq!(r.code(), 1);
        assert!(markdown(&r, None, &Freshness::Current, "").contains("**Red. Failing: Teardown.**"));
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &r).unwrap();
        let back = last(d.path(), "e").unwrap();
        assert_eq!(tally(&back), "1 pass, 1 fail, 17 not run");
    }

    #[test]
    fn the_timing_table_shows_each_share() {
        let t = timing_table(&record());
        assert!(t.contains("| the harness itself"), "{t}");
        assert!(
            t.contains("90.0%") && t.contains("1.0%") && t.contains("100.0%"),
            "{t}"
        );
    }

    #[test]
    fn durations_read_like_the_seeds() {
        assert_eq!(human(Duration::from_millis(800)), "0.8s");
        assert_eq!(human(Duration::from_secs(23)), "23s");
        assert_eq!(human(Duration::from_secs(94)), "1m34s");
    }
}
