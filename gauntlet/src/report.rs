//! Renderings of a [`RunRecord`]: `reports/<estate>.json` and the evidence
//! page `reports/<estate>.md`, in the seed pages' form.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::evidence::{RunRecord, Verdict};

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

/// The Markdown evidence page.
pub fn markdown(r: &RunRecord) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Evidence · {}\n", r.estate);
    let _ = writeln!(md, "{}\n", r.description);
    let _ = writeln!(md, "Set: {}. Lane: {}.\n", r.set, r.lane);
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
    md.push_str("| Stage | Verdict | Duration | Detail |\n|---|---|---|---|\n");
    for s in &r.stages {
        let title = if s.headline {
            s.title.clone()
        } else {
            format!("{} (not a headline stage)", s.title)
        };
        let duration = s
            .duration_ms
            .map(|ms| human(Duration::from_millis(ms)))
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            cell(&title),
            s.verdict.word(),
            duration,
            cell(&s.detail)
        );
    }
    let t = &r.timing;
    let v = &r.versions;
    let _ = writeln!(
        md,
        "\nLast run at commit {} on {}, exit code {}, against substrate moto {} (two servers on loopback, one per twin), witness aws-cli {}. Total run time {}: terraform and its provider {}, choudoufu and its provider {}, emulator start {}, witness {}, provisioning {}, the harness itself {} ({:.1}%).\n",
        r.commit,
        r.started_at,
        r.exit_code,
        or_unknown(&v.emulator),
        or_unknown(&v.witness),
        human(t.total),
        human(t.terraform),
        human(t.engine),
        human(t.emulator),
        human(t.witness),
        human(t.provisioning),
        human(t.harness),
        t.harness_share() * 100.0
    );
    let pin = if v.terraform.is_empty() {
        "not found".to_owned()
    } else if v.terraform == v.terraform_pin {
        format!("{} (matches the pin)", v.terraform)
    } else {
        format!("{}. Stale: the pin is {}", v.terraform, v.terraform_pin)
    };
    let _ = writeln!(
        md,
        "Oracle: stock terraform {pin}, hashicorp/aws provider {}.\n",
        or_unknown(&v.aws_provider)
    );
    let _ = writeln!(md, "Engine: choudoufu {}.\n", v.engine);
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
    md.push_str(
        "Needs stock terraform on PATH (or TERRAFORM), the aws provider in a filesystem mirror or plugin cache, and Python 3 with venv; the run installs the pinned moto and AWS CLI into a project-local virtualenv. `BREAK_<NAME>=1` or `--break <name>` corrupts one assertion to show it is load-bearing (`cargo run -p gauntlet -- breaks` lists them).\n",
    );
    md
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() {
        "unknown"
    } else {
        s
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The HTML evidence page: the same record as the Markdown page, for a
/// browser.
pub fn html(r: &RunRecord) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Evidence · {0}</title>\n<style>body{{font-family:sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.4rem;vertical-align:top}}.pass{{color:#176f2c}}.fail,.error{{color:#b3261e}}.not-run{{color:#777}}pre{{background:#f6f6f6;padding:.5rem;overflow:auto}}</style></head><body>\n<h1>Evidence · {0}</h1>\n<p>{1}</p>\n<p>Set: {2}. Lane: {3}.</p>\n<p><strong>{4}</strong></p>\n",
        escape(&r.estate),
        escape(&r.description),
        escape(&r.set),
        escape(&r.lane),
        escape(&r.verdict_line())
    );
    if let Some(e) = &r.error {
        let _ = writeln!(h, "<pre>{}</pre>", escape(e.trim()));
    }
    h.push_str("<table><tr><th>Stage</th><th>Verdict</th><th>Duration</th><th>Detail</th></tr>\n");
    for s in &r.stages {
        let class = s.verdict.word().replace(' ', "-");
        let duration = s
            .duration_ms
            .map(|ms| human(Duration::from_millis(ms)))
            .unwrap_or_default();
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"{class}\">{}</td><td>{duration}</td><td>{}</td></tr>",
            escape(&s.title),
            s.verdict.word(),
            escape(&s.detail)
        );
    }
    h.push_str("</table>\n");
    for p in &r.plans {
        let _ = writeln!(
            h,
            "<details><summary>{}: {} on the {} twin: {}</summary><pre>{}</pre></details>",
            escape(p.stage.title()),
            escape(&p.tool),
            escape(&p.twin),
            escape(&p.summary),
            escape(p.text.trim_end())
        );
    }
    let _ = writeln!(
        h,
        "<p>Commit {}, {}, exit code {}, moto {}, aws-cli {}, terraform {}, choudoufu {}. Total run time {}.</p>\n<pre>{}</pre>\n</body></html>",
        escape(&r.commit),
        escape(&r.started_at),
        r.exit_code,
        escape(&r.versions.emulator),
        escape(&r.versions.witness),
        escape(&r.versions.terraform),
        escape(&r.versions.engine),
        human(r.timing.total),
        escape(&r.reproduce)
    );
    h
}

/// Write `<dir>/<estate>.json`, `<dir>/<estate>.md` and `<dir>/<estate>.html`.
pub fn write(dir: &Path, r: &RunRecord) -> std::io::Result<(PathBuf, PathBuf)> {
    fs::create_dir_all(dir)?;
    let json = dir.join(format!("{}.json", r.estate));
    let md = dir.join(format!("{}.md", r.estate));
    let text = serde_json::to_string_pretty(r).map_err(std::io::Error::other)?;
    fs::write(&json, text + "\n")?;
    fs::write(&md, markdown(r))?;
    fs::write(dir.join(format!("{}.html", r.estate)), html(r))?;
    Ok((json, md))
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
mod tests {
    use super::*;
    use crate::clock::Breakdown;
    use crate::evidence::{StageRecord, Versions};
    use crate::stage::StageId;

    fn record() -> RunRecord {
        let mut stages: Vec<StageRecord> = StageId::ALL
            .iter()
            .map(|s| StageRecord::not_run(*s, ""))
            .collect();
        stages[0].verdict = Verdict::Pass;
        stages[0].duration_ms = Some(94_000);
        stages[0].detail = "17 objects | on both twins".into();
        RunRecord {
            estate: "e".into(),
            description: "An estate.".into(),
            set: "growing".into(),
            lane: "aws".into(),
            stages,
            commit: "abc".into(),
            started_at: "2026-12-02T00:00:00Z".into(),
            exit_code: 0,
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
        }
    }

    #[test]
    fn the_page_has_the_seed_form() {
        let md = markdown(&record());
        assert!(md.contains("| Stage | Verdict | Duration | Detail |"));
        assert!(md.contains("| Cold deploy | pass | 1m34s | 17 objects \\| on both twins |"));
        assert!(md.contains("| Strict profile (not a headline stage) | not run |"));
        assert!(md.contains("Clear so far. Every stage that ran passes; 12 of 13"));
        assert!(md.contains("terraform 1.11.4 (matches the pin)"));
        assert!(md.contains("the harness itself 1.0s (1.0%)"));
        assert!(md.contains("cargo run -p gauntlet -- run e"));
    }

    #[test]
    fn a_failing_stage_turns_the_page_red_and_the_record_round_trips() {
        let mut r = record();
        r.stages[10].verdict = Verdict::Fail;
        assert_eq!(r.code(), 1);
        assert!(markdown(&r).contains("**Red. Failing: Teardown.**"));
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &r).unwrap();
        let back = last(d.path(), "e").unwrap();
        assert_eq!(tally(&back), "1 pass, 1 fail, 15 not run");
    }

    #[test]
    fn the_html_page_escapes_what_it_shows() {
        let mut r = record();
        r.stages[0].detail = "<script>x</script> & more".into();
        let h = html(&r);
        assert!(h.contains("&lt;script&gt;x&lt;/script&gt; &amp; more"));
        assert!(h.contains("<td class=\"pass\">pass</td>"));
        assert!(h.contains("<td class=\"not-run\">not run</td>"));
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
