//! The evidence site: every page a reader opens in a browser, rendered from
//! what `reports/` holds.
//!
//! `reports/index.html` and `reports/index.md` put every estate whose run
//! record is in `reports/` (whatever estates those are) in a matrix of
//! stages, each cell linking to its stage's row on the estate's page, then
//! the plan-from-nothing figures `scripts/bench-plan.sh` wrote to
//! `reports/plan-from-nothing.json`. Each estate's HTML page shows its run,
//! what changed since the run before (`history`), its history and a chart
//! of each stage's time. Charts are SVG drawn in Rust (`chart`), inline in
//! the HTML and as files beside the Markdown; the pages load nothing from
//! the network, carry no script, read at phone width and print. Every
//! page ends with "Reproduce it". The run records themselves are `report`'s.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::chart::{self, Bars, ChartError, Series};
use crate::conditions::Conditions;
use crate::evidence::{RunRecord, StageRecord, Verdict};
use crate::freshness::{self, Freshness};
use crate::history::{self, HistoryError, Line, Since};
use crate::report::{self, human, PageError, BREAKS, NEEDS, TOGGLES_PAGE};
use crate::stage::{StageId, Toggle};

/// The plan-from-nothing figures `scripts/bench-plan.sh` writes.
pub const PLAN_FROM_NOTHING: &str = "plan-from-nothing.json";

/// The commands that render every page from scratch, as the README gives
/// them.
pub const SITE_COMMANDS: &str = "for e in $(scripts/evidence.sh estates | tr -d '[]\"' | tr , ' '); do scripts/evidence.sh run \"$e\"; done\n\
scripts/evidence.sh site --screens";

/// What rendering the site needs besides the runs.
const SITE_NEEDS: &str = "`--screens` needs headless Chromium (`CHROMIUM`, else `chromium` on PATH: Debian's `apt-get install -y chromium`).";

/// The plan-from-nothing figures: stock's refresh plan against the
/// engine's plan from the live system, at several estate sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanFromNothing {
    pub started_at: String,
    pub commit: String,
    /// `release` or `debug`.
    pub build: String,
    pub cores: u32,
    /// `Terraform v1.11.4`, as `terraform version` prints it.
    pub terraform: String,
    pub aws_provider: String,
    pub emulator: String,
    /// The command that produced the figures.
    pub command: String,
    pub rows: Vec<BenchRow>,
}

/// One estate size of the plan-from-nothing figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    pub objects: u64,
    pub terraform_s: f64,
    pub terraform_requests: u64,
    pub choudoufu_s: f64,
    pub choudoufu_requests: u64,
    pub no_records_s: f64,
    pub no_records_requests: u64,
    /// How many SSM parameters the record store held, and how many pages
    /// of ten a plan reads them in (figures from before the store moved
    /// into the live system have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_parameters: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_pages: Option<u64>,
}

impl BenchRow {
    /// The record store's parameters and pages, for a table cell.
    fn store(&self) -> String {
        match (self.store_parameters, self.store_pages) {
            (Some(n), Some(p)) => format!("{n}, {p}"),
            _ => "–".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a run record: {source}")]
    Record {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: not the plan-from-nothing figures: {source}")]
    Bench {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("no run records in {0}: run an estate first (cargo run -p gauntlet -- run <estate>)")]
    Empty(PathBuf),
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error(transparent)]
    Page(#[from] PageError),
}

/// Everything the site is rendered from.
pub struct Site {
    /// Each estate's last run with its history and whether it is still
    /// current, by estate name.
    pub estates: Vec<(RunRecord, Vec<Line>, Freshness)>,
    /// The kept runs with BREAK toggles on (`reports/breaks/`), with their
    /// histories: each toggle's red evidence.
    pub breaks: Vec<(RunRecord, Vec<Line>)>,
    pub plan_from_nothing: Option<PlanFromNothing>,
    /// Whether those figures still speak for the engine and the script.
    pub bench_fresh: Freshness,
}

/// Every `*.json` in `dir` that is a run record (an object with
/// `stages`), with its estate's history from `dir/history`, by estate.
fn records(dir: &Path) -> Result<Vec<(RunRecord, Vec<Line>)>, SiteError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| SiteError::Io { path, source }
    };
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| p.file_name().is_none_or(|n| n != PLAN_FROM_NOTHING))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let text = fs::read_to_string(&path).map_err(io(&path))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|source| SiteError::Record {
                path: path.clone(),
                source,
            })?;
        if value.get("stages").is_none() {
            continue;
        }
        let record: RunRecord =
            serde_json::from_value(value).map_err(|source| SiteError::Record {
                path: path.clone(),
                source,
            })?;
        let lines = history::read(dir, &record.estate)?;
        out.push((record, lines));
    }
    out.sort_by(|a, b| a.0.estate.cmp(&b.0.estate));
    Ok(out)
}

impl Site {
    /// Read `reports/`: every `*.json` that is a run record (an object with
    /// `stages`), each estate's history, the kept broken runs of
    /// `reports/breaks/`, and the plan-from-nothing figures.
    pub fn load(reports: &Path) -> Result<Site, SiteError> {
        let estates: Vec<(RunRecord, Vec<Line>, Freshness)> = records(reports)?
            .into_iter()
            .map(|(r, lines)| {
                let fresh = freshness::of(reports, &r);
                (r, lines, fresh)
            })
            .collect();
        if estates.is_empty() {
            return Err(SiteError::Empty(reports.to_owned()));
        }
        let breaks_dir = reports.join(report::BREAKS_DIR);
        let breaks = if breaks_dir.is_dir() {
            records(&breaks_dir)?
        } else {
            Vec::new()
        };
        let bench_path = reports.join(PLAN_FROM_NOTHING);
        let plan_from_nothing = if bench_path.is_file() {
            let text = fs::read_to_string(&bench_path).map_err(|source| SiteError::Io {
                path: bench_path.clone(),
                source,
            })?;
            Some(
                serde_json::from_str::<PlanFromNothing>(&text).map_err(|source| {
                    SiteError::Bench {
                        path: bench_path.clone(),
                        source,
                    }
                })?,
            )
        } else {
            None
        };
        let bench_fresh = match &plan_from_nothing {
            Some(b) => freshness::of_figures(reports, &b.commit),
            None => Freshness::Current,
        };
        Ok(Site {
            estates,
            breaks,
            plan_from_nothing,
            bench_fresh,
        })
    }

    /// The stages any estate's record lists, in the page's order.
    fn stages(&self) -> Vec<StageId> {
        StageId::ALL
            .into_iter()
            .filter(|s| {
                self.estates
                    .iter()
                    .any(|(r, _, _)| r.stages.iter().any(|x| x.stage == *s))
            })
            .collect()
    }
}

/// Render every page from what `reports` holds: each estate's Markdown and
/// HTML pages and chart, the index in HTML and Markdown, and the
/// plan-from-nothing charts. Returns the index's path.
pub fn render(reports: &Path) -> Result<PathBuf, SiteError> {
    let site = Site::load(reports)?;
    for (r, lines, _) in &site.estates {
        report::pages(reports, r, lines, "")?;
    }
    let charts = match &site.plan_from_nothing {
        Some(b) => Some(bench_charts(b)?),
        None => None,
    };
    if let Some([time, requests]) = &charts {
        put(&reports.join(BENCH_TIME_CHART), time)?;
        put(&reports.join(BENCH_REQUESTS_CHART), requests)?;
    }
    let breaks_dir = reports.join(report::BREAKS_DIR);
    for (r, lines) in &site.breaks {
        report::pages(&breaks_dir, r, lines, "../")?;
    }
    let red = report::red_runs(site.breaks.iter().map(|(r, _)| r));
    put(
        &reports.join(format!("{TOGGLES_PAGE}.md")),
        &report::toggles_page(&red),
    )?;
    put(
        &reports.join(format!("{TOGGLES_PAGE}.html")),
        &toggles_page_html(&red),
    )?;
    put(&reports.join("index.md"), &index_markdown(&site))?;
    let index = reports.join("index.html");
    put(&index, &index_html(&site, charts.as_ref()))?;
    Ok(index)
}

/// The site's HTML pages in `reports`: the index, then each estate's.
pub fn pages(reports: &Path) -> Result<Vec<PathBuf>, SiteError> {
    let site = Site::load(reports)?;
    let mut pages = vec![
        reports.join("index.html"),
        reports.join(format!("{TOGGLES_PAGE}.html")),
    ];
    pages.extend(
        site.estates
            .iter()
            .map(|(r, _, _)| reports.join(format!("{}.html", r.estate))),
    );
    pages.extend(site.breaks.iter().map(|(r, _)| {
        reports
            .join(report::BREAKS_DIR)
            .join(format!("{}.html", r.estate))
    }));
    Ok(pages)
}

fn put(path: &Path, text: &str) -> Result<(), SiteError> {
    let io = |source| SiteError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io)?;
    }
    fs::write(path, text).map_err(io)
}

const BENCH_TIME_CHART: &str = "charts/plan-from-nothing-time.svg";
const BENCH_REQUESTS_CHART: &str = "charts/plan-from-nothing-requests.svg";

/// Where an estate's chart of its stages' time lives, relative to
/// `reports/`.
pub fn stage_chart_path(estate: &str) -> String {
    format!("charts/{estate}-stages.svg")
}

/// The chart of each measured stage's time, the engine beside stock; none
/// when no stage of the run was measured.
pub fn stage_chart(r: &RunRecord) -> Result<Option<String>, ChartError> {
    let rows: Vec<(String, [f64; 2])> = r
        .stages
        .iter()
        .filter_map(|s| {
            let m = s.measured?;
            Some((
                s.title.clone(),
                [m.engine_ms as f64 / 1000.0, m.stock_ms as f64 / 1000.0],
            ))
        })
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let caption = format!(
        "{}: each stage's time, choudoufu beside stock terraform",
        r.estate
    );
    chart::paired_bars(&Bars {
        caption: &caption,
        unit: "seconds the tool ran during the stage",
        names: ["choudoufu", "stock terraform"],
        rows,
    })
    .map(Some)
}

/// The plan-from-nothing charts: wall time, then requests, against object
/// count.
fn bench_charts(b: &PlanFromNothing) -> Result<[String; 2], ChartError> {
    let series = |f: &dyn Fn(&BenchRow) -> [f64; 3]| -> Vec<Series<'static>> {
        let names = [
            "terraform plan (refresh)",
            "choudoufu plan",
            "choudoufu plan -no-records",
        ];
        let colours = [chart::STOCK, chart::ENGINE, chart::THIRD];
        (0..3)
            .map(|k| Series {
                name: names[k],
                colour: colours[k],
                points: b.rows.iter().map(|r| (r.objects as f64, f(r)[k])).collect(),
            })
            .collect()
    };
    let time = chart::lines(
        "Plan from nothing: wall time against object count",
        "objects in the estate",
        "seconds",
        &series(&|r| [r.terraform_s, r.choudoufu_s, r.no_records_s]),
    )?;
    let requests = chart::lines(
        "Plan from nothing: requests to the emulator against object count",
        "objects in the estate",
        "requests",
        &series(&|r| {
            [
                r.terraform_requests as f64,
                r.choudoufu_requests as f64,
                r.no_records_requests as f64,
            ]
        }),
    )?;
    Ok([time, requests])
}

/// Text made safe for HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Markdown's `code` spans as HTML, the rest escaped.
fn inline(md: &str) -> String {
    md.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", escape(part))
            } else {
                escape(part)
            }
        })
        .collect()
}

/// `2026-12-04 13:09 UTC` from `2026-12-04T13:09:37Z`.
fn date(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(d), Some(t)) if rfc3339.ends_with('Z') => format!("{d} {t} UTC"),
        _ => rfc3339.to_owned(),
    }
}

fn ms(ms: u64) -> String {
    human(Duration::from_millis(ms))
}

fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Error => "error",
        Verdict::NotRun => "not-run",
    }
}

/// Whether a run's verdict line is green.
fn clear(r: &RunRecord) -> bool {
    r.error.is_none() && r.code() == 0
}

/// The page's stylesheet: system fonts only, a phone layout, and a print
/// layout.
const STYLE: &str = r#"
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;line-height:1.45;color:#1b1b1b;background:#fff;max-width:84rem;margin:0 auto;padding:1rem 1.25rem 3rem;overflow-wrap:break-word}
h1{font-size:1.6rem;margin:.6rem 0}
h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1.05rem;margin:1.2rem 0 .3rem}
a{color:#1f5fa8}
nav{font-size:.95rem}
nav a{margin-right:1rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.92rem;margin:.5rem 0}
th,td{border:1px solid #d0d0d0;padding:.35rem .5rem;vertical-align:top;text-align:left;overflow-wrap:anywhere}
thead th{background:#f3f3f3}
td.num{text-align:right;white-space:nowrap}
.pass{color:#176f2c}.fail,.error{color:#b3261e;font-weight:600}.not-run{color:#6b6b6b}
td.v.pass{background:#e9f5eb}td.v.fail,td.v.error{background:#fde9e7}
.verdict{font-size:1.1rem;padding:.5rem .75rem;border-left:6px solid;margin:1rem 0}
.verdict.clear{border-color:#176f2c;background:#e9f5eb}.verdict.red{border-color:#b3261e;background:#fde9e7}
.stale{padding:.5rem .75rem;border-left:6px solid #b36b00;background:#fff4e0}
.provenance{font-size:.88rem;color:#444;overflow-wrap:anywhere}
.matrix{width:100%;table-layout:fixed}
.matrix th.stage{font-size:.7rem;font-weight:600;vertical-align:bottom;padding:.3rem .2rem;hyphens:auto;overflow-wrap:anywhere}
.matrix td{text-align:center;vertical-align:middle}
.matrix th[scope=row]{position:sticky;left:0;background:#fff;width:10rem;font-weight:normal}
.matrix thead th:first-child{width:10rem}
.matrix th[scope=row] a{font-weight:600}
.matrix td{font-size:.78rem;padding:.35rem .1rem}
.matrix td.v a{display:block;text-decoration:none;color:inherit}
section.stage:target{outline:3px solid #1f5fa8;outline-offset:4px}
ul.checks{padding-left:1.2rem;font-size:.9rem;overflow-wrap:anywhere}
ul.checks li{margin:.3rem 0}
ul.checks li.pass strong{color:#176f2c}ul.checks li.fail strong{color:#b3261e}
.seen{color:#333}
figure{margin:1rem 0}
figure svg{display:block;width:100%;height:auto;max-width:860px;border:1px solid #e4e4e4}
figcaption{font-size:.9rem;color:#444}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:.86rem}
pre{background:#f6f6f6;padding:.6rem;overflow-x:auto;white-space:pre-wrap;word-break:break-word}
summary{cursor:pointer}
table.stages{width:100%}
ul.changes li.red{color:#b3261e}ul.changes li.green{color:#176f2c}
@media (max-width:42rem){
body{padding:.6rem}
h1{font-size:1.3rem}
table.cards,table.cards tbody,table.cards tr,table.cards th,table.cards td{display:block;width:100%}
table.cards thead{display:none}
table.cards tr{border:1px solid #c8c8c8;margin-bottom:.8rem}
table.cards th,table.cards td{border:0;border-top:1px solid #eee;text-align:left;white-space:normal;position:static}
table.cards td:empty{display:none}
table.cards td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:#444}
.matrix td{text-align:left;font-size:.9rem;padding:.2rem .5rem}
.matrix td.v a{display:inline}
figure.chart{overflow-x:auto;-webkit-overflow-scrolling:touch}
figure.chart svg{min-width:780px}
}
@media print{
body{max-width:none;padding:0;font-size:9.5pt;-webkit-print-color-adjust:exact;print-color-adjust:exact}
nav,.plans{display:none}
a{color:inherit;text-decoration:none}
.scroll{overflow:visible}
.matrix{font-size:7pt}.matrix th.stage{font-size:6.5pt}
table.stages{width:100%;table-layout:fixed}
table.stages th,table.stages td{overflow-wrap:anywhere;font-size:7.5pt}
figure,pre{break-inside:avoid}
h2{break-after:avoid}
figure svg{max-width:16cm;border:0}
}
"#;

/// A whole HTML document.
fn document(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        escape(title)
    )
}

/// An inline SVG chart in a figure.
fn figure(svg: &str, label: &str, caption: &str) -> String {
    let svg = svg.replacen(
        "<svg ",
        &format!("<svg role=\"img\" aria-label=\"{}\" ", escape(label)),
        1,
    );
    format!(
        "<figure class=\"chart\">\n{svg}\n<figcaption>{}</figcaption></figure>\n",
        inline(caption)
    )
}

/// The BREAK toggles as an HTML table, each row anchored by its name, with
/// the kept run that shows its stage red.
fn toggles_html(red: &BTreeMap<Toggle, String>) -> String {
    let mut h = String::from("<div class=\"scroll\"><table class=\"toggles cards\"><thead><tr><th>Toggle</th><th>Stage</th><th>Passes when</th><th>What the toggle corrupts</th><th>Red under it</th></tr></thead><tbody>\n");
    for t in Toggle::ALL {
        let shown = red.get(&t).map_or_else(
            || "no broken run kept".to_owned(),
            |e| {
                format!(
                    "<a href=\"{}/{1}.html#{2}\">{1}</a>",
                    report::BREAKS_DIR,
                    escape(e),
                    t.stage().slug()
                )
            },
        );
        let _ = writeln!(
            h,
            "<tr id=\"{0}\"><td><code>{0}</code><br><code>{1}=1</code></td><td data-label=\"Stage\">{2}</td><td data-label=\"Passes when\">{3}</td><td data-label=\"What the toggle corrupts\">{4}</td><td data-label=\"Red under it\">{shown}</td></tr>",
            t.name(),
            t.env(),
            escape(t.stage().title()),
            inline(t.bar()),
            escape(t.what())
        );
    }
    h.push_str("</tbody></table></div>\n");
    h
}

/// The toggle catalogue's page.
pub fn toggles_page_html(red: &BTreeMap<Toggle, String>) -> String {
    let body = format!(
        "<nav><a href=\"index.html\">All estates</a><a href=\"{TOGGLES_PAGE}.md\">Markdown</a></nav>\n<h1>The BREAK toggles</h1>\n<p>{}</p>\n<p>{}</p>\n{}",
        escape(report::TOGGLES_INTRO),
        inline(BREAKS),
        toggles_html(red)
    );
    document("The BREAK toggles", &body)
}

/// "Reproduce it" in HTML: the commands, what they need, the toggles.
fn reproduce_html(commands: &str, needs: &str, up: &str) -> String {
    format!(
        "<section id=\"reproduce\"><h2>Reproduce it</h2>\n<pre>{}</pre>\n<p>{}</p>\n<p>{} Every toggle, its stage and its condition: <a href=\"{up}{TOGGLES_PAGE}.html\">the toggles</a>.</p>\n</section>\n",
        escape(commands),
        inline(needs),
        inline(BREAKS)
    )
}

fn since_html(conditions: &Conditions, since: Option<&Since>) -> String {
    let (previous, changes, passed_over) = match since {
        None => return "<p>No earlier run in this estate's history to compare with.</p>\n".into(),
        Some(Since::NoneAlike { earlier }) => {
            return format!(
                "<p>{}</p>\n",
                escape(&history::none_alike(conditions, *earlier))
            )
        }
        Some(Since::Like {
            previous,
            changes,
            passed_over,
        }) => (previous, changes, *passed_over),
    };
    let mut h = format!(
        "<p>{} ",
        escape(&history::since_lead(conditions, previous, passed_over))
    );
    if changes.is_empty() {
        h.push_str("no stage turned red or green, and no stage's duration moved by more than a quarter.</p>\n");
        return h;
    }
    h.push_str("</p>\n<ul class=\"changes\">\n");
    for c in changes {
        let colour = match c {
            history::Change::TurnedRed { .. } => " class=\"red\"",
            history::Change::TurnedGreen { .. } => " class=\"green\"",
            history::Change::Moved { .. } => "",
        };
        let _ = writeln!(
            h,
            "<li{colour}><a href=\"#{}\">{}</a>.</li>",
            c.stage().slug(),
            escape(&c.to_string())
        );
    }
    h.push_str("</ul>\n");
    h
}

/// `16 pass, 1 not run` of a run.
fn tally_of(r: &RunRecord) -> String {
    tally(&Line::of(r))
}

/// `16 pass, 1 not run`.
fn tally(line: &Line) -> String {
    let mut parts = Vec::new();
    for v in [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Error,
        Verdict::NotRun,
    ] {
        let n = line.stages.iter().filter(|s| s.verdict == v).count();
        if n > 0 {
            parts.push(format!("{n} {}", v.word()));
        }
    }
    parts.join(", ")
}

fn history_html(estate: &str, lines: &[Line]) -> String {
    if lines.is_empty() {
        return format!(
            "<section id=\"history\"><h2>History</h2>\n<p>No run is in the history yet: each run appends a line to <code>history/{}.jsonl</code>.</p></section>\n",
            escape(estate)
        );
    }
    let mut h = format!(
        "<section id=\"history\"><h2>History</h2>\n<p>Every run of this estate, newest first, from <a href=\"history/{0}.jsonl\">history/{0}.jsonl</a>.</p>\n",
        escape(estate)
    );
    h.push_str("<div class=\"scroll\"><table class=\"cards\"><thead><tr><th>Started</th><th>Commit</th><th>Exit code</th><th>Stages</th><th>Total</th><th>Conditions</th><th>BREAK toggles on</th></tr></thead><tbody>\n");
    for l in lines.iter().rev() {
        let _ = writeln!(
            h,
            "<tr><td data-label=\"Started\">{}</td><td data-label=\"Commit\"><code>{}</code></td><td class=\"num\" data-label=\"Exit code\">{}</td><td data-label=\"Stages\">{}</td><td class=\"num\" data-label=\"Total\">{}</td><td data-label=\"Conditions\">{}</td><td data-label=\"BREAK toggles on\">{}</td></tr>",
            date(&l.started_at),
            escape(&l.commit),
            l.exit_code,
            tally(l),
            ms(l.total_ms),
            escape(&l.conditions.describe()),
            escape(&l.breaks.join(", "))
        );
    }
    h.push_str("</tbody></table></div></section>\n");
    h
}

fn stage_row(s: &StageRecord) -> String {
    let title = if s.headline {
        escape(&s.title)
    } else {
        format!("{} <small>(not a headline stage)</small>", escape(&s.title))
    };
    let duration = s.duration_ms.map(ms).unwrap_or_default();
    let (engine, stock, requests) = match &s.measured {
        Some(m) => (
            report::ran_for(m.engine_ms),
            report::ran_for(m.stock_ms),
            format!("{} / {}", m.estate_requests, m.oracle_requests),
        ),
        None => Default::default(),
    };
    let verdict = s.given();
    format!(
        "<tr><th scope=\"row\"><a href=\"#{}\">{title}</a></th><td class=\"v {}\" data-label=\"Verdict\">{}</td><td class=\"num\" data-label=\"Duration\">{duration}</td><td class=\"num\" data-label=\"choudoufu\">{engine}</td><td class=\"num\" data-label=\"stock terraform\">{stock}</td><td class=\"num\" data-label=\"moto requests, estate / oracle\">{requests}</td></tr>\n",
        s.stage.slug(),
        class(verdict),
        verdict.word(),
    )
}

/// One stage in full: its verdict, what it did, and each assertion with
/// its condition, its toggle and what was seen.
fn stage_section(s: &StageRecord, up: &str) -> String {
    let verdict = s.given();
    let duration = s
        .duration_ms
        .map(|d| format!(" in {}", ms(d)))
        .unwrap_or_default();
    let mut h = format!(
        "<section class=\"stage\" id=\"{}\"><h3>{}</h3>\n<p><strong class=\"{}\">{}</strong>{duration}. {}</p>\n",
        s.stage.slug(),
        escape(&report::titled(s)),
        class(verdict),
        verdict.word(),
        escape(report::why(s))
    );
    if !s.checks.is_empty() {
        h.push_str("<ul class=\"checks\">\n");
        for c in &s.checks {
            let (class, word) = if c.holds {
                ("pass", "holds")
            } else {
                ("fail", "FAILED")
            };
            let _ = writeln!(
                h,
                "<li class=\"{class}\"><strong>{word}</strong>: passes when {} (<a href=\"{up}{TOGGLES_PAGE}.html#{1}\"><code>{1}</code></a>). <span class=\"seen\">Seen: {2}</span></li>",
                inline(c.toggle.bar()),
                c.toggle.name(),
                escape(&c.seen)
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
    h
}

/// An estate's HTML page: its last run, what changed since the run before,
/// each stage's time, its history, and how to reproduce it.
pub fn estate_html(
    r: &RunRecord,
    lines: &[Line],
    since: Option<&Since>,
    fresh: &Freshness,
    chart: Option<&str>,
    up: &str,
) -> String {
    let e = escape(&r.estate);
    let history_link = if lines.is_empty() {
        String::new()
    } else {
        format!("<a href=\"history/{e}.jsonl\">History</a>")
    };
    let mut h = format!(
        "<nav><a href=\"{up}index.html\">All estates</a><a href=\"{up}{TOGGLES_PAGE}.html\">Toggles</a><a href=\"{e}.md\">Markdown</a><a href=\"{e}.json\">JSON</a>{history_link}</nav>\n<h1>Evidence · {e}</h1>\n<p>{}</p>\n{}<p>{}</p>\n{}<p class=\"verdict {}\"><strong>{}</strong></p>\n<p class=\"provenance\">{}</p>\n",
        escape(&r.description),
        r.source.as_ref().map_or(String::new(), |s| format!(
            "<p>{}</p>\n",
            escape(&crate::report::source_line(s))
        )),
        inline(&report::kind(r)),
        match fresh.banner(r) {
            b if b.is_empty() => String::new(),
            b => format!("<p class=\"stale\">{}</p>\n", inline(&b)),
        },
        if clear(r) { "clear" } else { "red" },
        escape(&r.verdict_line()),
        escape(&report::provenance(r))
    );
    if !r.breaks.is_empty() {
        let _ = writeln!(
            h,
            "<p>BREAK toggles on: {}. This run corrupts those assertions on purpose.</p>",
            escape(&r.breaks.join(", "))
        );
    }
    if let Some(err) = &r.error {
        let _ = writeln!(h, "<pre>{}</pre>", escape(err.trim()));
    }
    h.push_str("<section id=\"changes\"><h2>Since the last run</h2>\n");
    h.push_str(&since_html(&r.conditions, since));
    h.push_str("</section>\n<section id=\"stages\"><h2>Stages</h2>\n<div class=\"scroll\"><table class=\"stages cards\"><thead><tr><th>Stage</th><th>Verdict</th><th>Duration</th><th>choudoufu</th><th>stock terraform</th><th>moto requests, estate / oracle</th></tr></thead><tbody>\n");
    for s in &r.stages {
        h.push_str(&stage_row(s));
    }
    let _ = writeln!(
        h,
        "</tbody></table></div>\n<p>choudoufu and stock terraform: the wall time each ran during the stage, with the provider it runs (overlapping runs counted once; – where it did not run). Requests: what moto served on each twin during the stage, the witness's reads included. {}: <a href=\"{up}{TOGGLES_PAGE}.html\">the toggles</a>.</p>\n</section>",
        escape(report::PASSES)
    );
    h.push_str("<section id=\"each-stage\"><h2>Each stage</h2>\n");
    for s in &r.stages {
        h.push_str(&stage_section(s, up));
    }
    h.push_str("</section>\n");
    if let Some(svg) = chart {
        h.push_str("<section id=\"time\"><h2>Where each stage's time went</h2>\n");
        h.push_str(&figure(
            svg,
            &format!("{}: each stage's time, choudoufu beside stock terraform", r.estate),
            "Each measured stage: the seconds choudoufu ran (blue, upper bar) beside the seconds stock terraform ran (orange, lower bar). Cold deploy is stock's alone; in the engine's stages stock runs the same step on the oracle twin wherever terraform has one.",
        ));
        h.push_str("</section>\n");
    }
    let t = &r.timing;
    h.push_str("<section id=\"run\"><h2>Where the run's time went</h2>\n");
    h.push_str(
        "<table><thead><tr><th>Where the run's time went</th><th>Time</th></tr></thead><tbody>\n",
    );
    for (what, d) in [
        ("terraform and its provider", t.terraform),
        ("choudoufu and its provider", t.engine),
        ("emulator start", t.emulator),
        ("witness (AWS CLI)", t.witness),
        ("provisioning", t.provisioning),
        ("the harness itself", t.harness),
        ("total", t.total),
    ] {
        let _ = writeln!(
            h,
            "<tr><td>{what}</td><td class=\"num\">{}</td></tr>",
            human(d)
        );
    }
    h.push_str("</tbody></table></section>\n");
    if !r.plans.is_empty() {
        h.push_str("<section id=\"plans\" class=\"plans\"><h2>Plans</h2>\n");
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
        h.push_str("</section>\n");
    }
    h.push_str(&history_html(&r.estate, lines));
    h.push_str(&reproduce_html(&r.reproduce, NEEDS, up));
    document(&format!("Evidence · {}", r.estate), &h)
}

const INTRO: &str = "choudoufu is a Terraform-compatible engine that keeps no state file: it finds what a root manages in the live system, by the markers it writes there, so losing the machine that ran the last apply loses nothing. These pages are its evidence. The gauntlet runs each estate, a real terraform root, through every stage of its life on twin moto servers: stock terraform on the oracle twin, choudoufu on the estate twin, and the AWS CLI reading both back. A row is an estate's last run; a cell is one stage's verdict and links to that stage on the estate's page.";

/// The cell of one stage in the matrix, in HTML.
fn matrix_cell(r: &RunRecord, stage: StageId) -> String {
    let e = escape(&r.estate);
    let Some(s) = r.stages.iter().find(|s| s.stage == stage) else {
        return "<td class=\"v none\"></td>".into();
    };
    let duration = s
        .duration_ms
        .map(|d| format!(" in {}", ms(d)))
        .unwrap_or_default();
    let ran = if s.verdict == Verdict::NotRun {
        ""
    } else {
        " data-ran=\"\""
    };
    let verdict = s.given();
    format!(
        "<td class=\"v {}\"{ran} data-label=\"{2}\"><a href=\"{e}.html#{}\" title=\"{}: {}{duration}\">{3}</a></td>",
        class(verdict),
        s.stage.slug(),
        escape(&s.title),
        verdict.word(),
    )
}

fn bench_table_html(b: &PlanFromNothing) -> String {
    let mut h = String::from("<div class=\"scroll\"><table class=\"cards\"><thead><tr><th>objects</th><th>terraform plan (refresh) s</th><th>requests</th><th>choudoufu plan s</th><th>requests</th><th>ratio</th><th>record store: parameters, pages</th><th>choudoufu plan -no-records s</th><th>requests</th></tr></thead><tbody>\n");
    for r in &b.rows {
        let _ = writeln!(
            h,
            "<tr><td class=\"num\" data-label=\"objects\">{}</td><td class=\"num\" data-label=\"terraform plan (refresh) s\">{:.2}</td><td class=\"num\" data-label=\"requests\">{}</td><td class=\"num\" data-label=\"choudoufu plan s\">{:.2}</td><td class=\"num\" data-label=\"requests\">{}</td><td class=\"num\" data-label=\"ratio\">{:.2}x</td><td class=\"num\" data-label=\"record store: parameters, pages\">{}</td><td class=\"num\" data-label=\"choudoufu plan -no-records s\">{:.2}</td><td class=\"num\" data-label=\"requests\">{}</td></tr>",
            r.objects,
            r.terraform_s,
            r.terraform_requests,
            r.choudoufu_s,
            r.choudoufu_requests,
            r.choudoufu_s / r.terraform_s,
            r.store(),
            r.no_records_s,
            r.no_records_requests
        );
    }
    h.push_str("</tbody></table></div>\n");
    h
}

fn bench_facts(b: &PlanFromNothing) -> String {
    format!(
        "Measured at commit `{}`, started {}, {} build, on {} cores; {}, hashicorp/aws {}, moto {}: `{}`.",
        b.commit,
        date(&b.started_at),
        b.build,
        b.cores,
        b.terraform,
        b.aws_provider,
        b.emulator,
        b.command
    )
}

const BENCH_INTRO: &str = "Generated estates of SSM parameters and S3 buckets are applied by stock terraform and migrated by choudoufu; then, with nothing changed, stock plans from its state with a refresh and choudoufu plans from the live system alone, with its record store and with `-no-records`. Goal: wall time at most stock's; requests at most stock's plus one listing per swept type.";

/// The index page in HTML.
pub fn index_html(site: &Site, bench_charts: Option<&[String; 2]>) -> String {
    let stages = site.stages();
    let mut h = String::from(
        "<nav><a href=\"#matrix\">Estates</a><a href=\"toggles.html\">Toggles</a><a href=\"#plan-from-nothing\">Plan from nothing</a><a href=\"#reproduce\">Reproduce it</a><a href=\"index.md\">Markdown</a></nav>\n<h1>choudoufu · evidence</h1>\n",
    );
    let _ = writeln!(h, "<p>{}</p>", inline(INTRO));
    h.push_str("<section id=\"matrix\"><h2>Estates by stage</h2>\n<div class=\"scroll\"><table class=\"matrix cards\"><thead><tr><th scope=\"col\">Estate, last run</th>");
    for s in &stages {
        let _ = write!(
            h,
            "<th class=\"stage\" scope=\"col\">{}</th>",
            escape(s.title()).replace('_', "_<wbr>")
        );
    }
    h.push_str("</tr></thead><tbody>\n");
    for (r, _, fresh) in &site.estates {
        let e = escape(&r.estate);
        let stale = if fresh.stale() {
            " · <span class=\"fail\">stale</span>"
        } else {
            ""
        };
        let (verdict_class, word) = if clear(r) {
            ("pass", "clear")
        } else {
            ("fail", "red")
        };
        let _ = write!(
            h,
            "<tr id=\"estate-{e}\" data-estate=\"{e}\"><th scope=\"row\"><a href=\"{e}.html\">{}</a><br><small><span class=\"{verdict_class}\">{word}</span> · {}<br>{} · <code>{}</code>{stale}</small></th>",
            e.replace('-', "-<wbr>"),
            tally_of(r),
            date(&r.started_at),
            escape(&r.commit)
        );
        for s in &stages {
            h.push_str(&matrix_cell(r, *s));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table></div>\n<p>pass: every assertion of the stage held; fail: one did not (the page names it); error: the stage could not finish; not run: the page says why.</p>\n<ul>\n");
    for (r, lines, _) in &site.estates {
        let e = escape(&r.estate);
        let _ = writeln!(
            h,
            "<li><a href=\"{e}.html\">{e}</a>: {}{} <a href=\"{e}.md\">Markdown</a> · <a href=\"{e}.json\">JSON</a>{}.</li>",
            escape(&r.description),
            r.source.as_ref().map_or(String::new(), |s| format!(
                " <em>{}</em>",
                escape(&crate::report::source_line(s))
            )),
            match lines.len() {
                0 => " · no run in its history yet".to_owned(),
                n => format!(
                    " · <a href=\"history/{e}.jsonl\">history</a> ({n} run{})",
                    if n == 1 { "" } else { "s" }
                ),
            }
        );
    }
    h.push_str("</ul></section>\n<section id=\"plan-from-nothing\"><h2>Plan from nothing</h2>\n");
    match &site.plan_from_nothing {
        Some(b) => {
            let _ = writeln!(h, "<p>{}</p>", inline(BENCH_INTRO));
            let banner = site.bench_fresh.says("These figures", &b.commit, &b.command);
            if !banner.is_empty() {
                let _ = writeln!(h, "<p class=\"stale\">{}</p>", inline(&banner));
            }
            h.push_str(&bench_table_html(b));
            let _ = writeln!(h, "<p>{} The page: <a href=\"plan-from-nothing.md\">plan-from-nothing.md</a>.</p>", inline(&bench_facts(b)));
            if let Some([time, requests]) = bench_charts {
                h.push_str(&figure(time, "Plan from nothing: wall time against object count", "Wall time of one plan with nothing to change, against the estate's object count."));
                h.push_str(&figure(requests, "Plan from nothing: requests against object count", "Requests moto served during that plan, against the estate's object count."));
            }
        }
        None => h.push_str("<p>No plan-from-nothing figures in this directory yet: <code>scripts/bench-plan.sh</code> writes them.</p>\n"),
    }
    h.push_str("</section>\n");
    let mut commands = SITE_COMMANDS.to_owned();
    if let Some(b) = &site.plan_from_nothing {
        commands.push('\n');
        commands.push_str(&b.command);
    }
    h.push_str(&reproduce_html(
        &commands,
        &format!("{NEEDS} {SITE_NEEDS}"),
        "",
    ));
    document("choudoufu · evidence", &h)
}

/// The index page in Markdown, for reading on the repository.
pub fn index_markdown(site: &Site) -> String {
    let stages = site.stages();
    let mut md = format!("# choudoufu · evidence\n\n{INTRO}\n\n## Estates by stage\n\n| Estate | Verdict | Last run |");
    for s in &stages {
        let _ = write!(md, " {} |", s.title());
    }
    md.push_str("\n|---|---|---|");
    md.push_str(&"---|".repeat(stages.len()));
    md.push('\n');
    for (r, _, fresh) in &site.estates {
        let e = &r.estate;
        let _ = write!(
            md,
            "| [{e}]({e}.md) | {} | {} `{}`{} |",
            if clear(r) { "clear" } else { "**red**" },
            date(&r.started_at),
            r.commit,
            if fresh.stale() { " **stale**" } else { "" }
        );
        for stage in &stages {
            match r.stages.iter().find(|s| s.stage == *stage) {
                Some(s) => {
                    let word = match s.verdict {
                        Verdict::Fail | Verdict::Error => format!("**{}**", s.verdict.word()),
                        v => v.word().to_owned(),
                    };
                    let _ = write!(md, " [{word}]({e}.md#{}) |", s.stage.slug());
                }
                None => md.push_str(" |"),
            }
        }
        md.push('\n');
    }
    md.push_str("\npass: every assertion of the stage held; fail: one did not (the page names it); error: the stage could not finish; not run: the page says why. Each estate's HTML page (`<estate>.html`) adds its history and a chart of each stage's time; `index.html` is this page for a browser.\n\n");
    for (r, lines, _) in &site.estates {
        let e = &r.estate;
        let _ = writeln!(
            md,
            "- [{e}]({e}.md): {}{} [JSON]({e}.json){}.",
            r.description,
            r.source.as_ref().map_or(String::new(), |s| format!(
                " {}",
                crate::report::source_line(s)
            )),
            match lines.len() {
                0 => " · no run in its history yet".to_owned(),
                n => format!(
                    " · [history](history/{e}.jsonl) ({n} run{})",
                    if n == 1 { "" } else { "s" }
                ),
            }
        );
    }
    md.push_str("\n## Plan from nothing\n\n");
    match &site.plan_from_nothing {
        Some(b) => {
            let _ = writeln!(md, "{BENCH_INTRO}\n");
            let banner = site.bench_fresh.says("These figures", &b.commit, &b.command);
            if !banner.is_empty() {
                let _ = writeln!(md, "> {banner}\n");
            }
            md.push_str("| objects | terraform plan (refresh) s | requests | choudoufu plan s | requests | ratio | record store: parameters, pages | choudoufu plan -no-records s | requests |\n|---|---|---|---|---|---|---|---|---|\n");
            for r in &b.rows {
                let _ = writeln!(
                    md,
                    "| {} | {:.2} | {} | {:.2} | {} | {:.2}x | {} | {:.2} | {} |",
                    r.objects,
                    r.terraform_s,
                    r.terraform_requests,
                    r.choudoufu_s,
                    r.choudoufu_requests,
                    r.choudoufu_s / r.terraform_s,
                    r.store(),
                    r.no_records_s,
                    r.no_records_requests
                );
            }
            let _ = writeln!(
                md,
                "\n{} The page: [plan-from-nothing.md](plan-from-nothing.md).\n\n![Plan from nothing: wall time against object count]({BENCH_TIME_CHART})\n\n![Plan from nothing: requests against object count]({BENCH_REQUESTS_CHART})",
                bench_facts(b)
            );
        }
        None => md.push_str("No plan-from-nothing figures in this directory yet: `scripts/bench-plan.sh` writes them.\n"),
    }
    let mut commands = SITE_COMMANDS.to_owned();
    if let Some(b) = &site.plan_from_nothing {
        commands.push('\n');
        commands.push_str(&b.command);
    }
    let _ = writeln!(
        md,
        "\n## Reproduce it\n\n```\n{commands}\n```\n\n{NEEDS} {SITE_NEEDS}\n\n{BREAKS} Every toggle, its stage and its condition: [the toggles]({TOGGLES_PAGE}.md)."
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::record;

    #[test]
    fn the_site_commands_are_the_readmes() {
        let readme = include_str!("../../README.md");
        for line in SITE_COMMANDS.lines() {
            assert!(
                readme.lines().any(|l| l.starts_with(line)),
                "README does not give {line:?}"
            );
        }
    }

    fn reports_with(records: &[RunRecord]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for r in records {
            fs::write(
                d.path().join(format!("{}.json", r.estate)),
                serde_json::to_string(r).unwrap(),
            )
            .unwrap();
        }
        d
    }

    #[test]
    fn the_site_takes_every_record_the_directory_holds() {
        let mut b = record();
        b.estate = "b-root".into();
        b.stages[0].verdict = Verdict::Fail;
        b.stages[0].checks[0].holds = false;
        b.stages[0].failed = vec!["cold-state".into()];
        let d = reports_with(&[b, record()]);
        // Other JSON beside the records is not an estate.
        fs::write(d.path().join("notes.json"), "{\"figures\": [1, 2]}").unwrap();
        let index = render(d.path()).unwrap();
        let md = fs::read_to_string(d.path().join("index.md")).unwrap();
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| [")).collect();
        assert_eq!(rows.len(), 2, "{md}");
        assert!(rows[0].starts_with("| [b-root](b-root.md) | **red** | 2026-12-02 00:00 UTC `abc` | [**fail**](b-root.md#cold-deploy) | [not run](b-root.md#migrate) |"), "{}", rows[0]);
        assert!(rows[1].starts_with("| [e](e.md) | clear |"), "{}", rows[1]);
        assert!(md.contains("No plan-from-nothing figures"));
        let html = fs::read_to_string(index).unwrap();
        assert_eq!(html.matches("<tr id=\"estate-").count(), 2);
        assert!(html.contains(
            "<a href=\"b-root.html#cold-deploy\" title=\"Cold deploy: fail in 1m34s\">fail</a>"
        ));
        for page in ["e.html", "e.md", "b-root.html", "b-root.md"] {
            assert!(d.path().join(page).is_file(), "{page}");
        }
        assert!(html.ends_with("</section>\n</body></html>\n"));
        assert!(html.contains("<section id=\"reproduce\"><h2>Reproduce it</h2>"));
    }

    #[test]
    fn a_broken_record_is_named_and_an_empty_directory_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = render(d.path()).unwrap_err().to_string();
        assert!(e.contains("no run records in"), "{e}");
        fs::write(d.path().join("x.json"), "{\"stages\": 3}").unwrap();
        let e = render(d.path()).unwrap_err().to_string();
        assert!(e.contains("x.json: not a run record"), "{e}");
    }

    #[test]
    fn the_estate_page_escapes_what_it_shows_and_anchors_each_stage() {
        let mut r = record();
        r.stages[0].detail = "<script>x</script> & more".into();
        let h = estate_html(&r, &[], None, &Freshness::Current, None, "");
        assert!(h.contains("&lt;script&gt;x&lt;/script&gt; &amp; more"));
        assert!(!h.contains("<script>"));
        assert!(h.contains(
            "<tr><th scope=\"row\"><a href=\"#cold-deploy\">Cold deploy</a></th><td class=\"v pass\""
        ));
        assert!(h.contains("<section class=\"stage\" id=\"cold-deploy\"><h3>Cold deploy</h3>\n<p><strong class=\"pass\">pass</strong> in 1m34s. &lt;script&gt;"));
        assert!(h.contains("<section class=\"stage\" id=\"two-estates-on-one-twin\">"));
        assert!(h.contains("<a href=\"toggles.html#cold-state\"><code>cold-state</code></a>"));
        assert!(h.contains("No earlier run in this estate's history"));
        // No history, no link to one.
        assert!(!h.contains("href=\"history/"));
        assert!(!h.contains("http://") && !h.contains("https://"));
    }

    #[test]
    fn the_plan_from_nothing_figures_draw_two_charts() {
        let d = reports_with(&[record()]);
        let bench = PlanFromNothing {
            started_at: "2026-12-03T22:47:39Z".into(),
            commit: "741e8ce54e".into(),
            build: "release".into(),
            cores: 2,
            terraform: "Terraform v1.11.4".into(),
            aws_provider: "5.100.0".into(),
            emulator: "5.2.5".into(),
            command: "SIZES=\"15 100\" scripts/bench-plan.sh".into(),
            rows: vec![
                BenchRow {
                    objects: 15,
                    terraform_s: 8.94,
                    terraform_requests: 81,
                    choudoufu_s: 4.32,
                    choudoufu_requests: 83,
                    no_records_s: 3.85,
                    no_records_requests: 83,
                    store_parameters: Some(4),
                    store_pages: Some(1),
                },
                BenchRow {
                    objects: 100,
                    terraform_s: 11.9,
                    terraform_requests: 540,
                    choudoufu_s: 6.14,
                    choudoufu_requests: 544,
                    no_records_s: 6.47,
                    no_records_requests: 544,
                    store_parameters: None,
                    store_pages: None,
                },
            ],
        };
        fs::write(
            d.path().join(PLAN_FROM_NOTHING),
            serde_json::to_string(&bench).unwrap(),
        )
        .unwrap();
        let html = fs::read_to_string(render(d.path()).unwrap()).unwrap();
        assert_eq!(html.matches("<figure class=\"chart\">").count(), 2);
        assert!(html.contains("<td class=\"num\" data-label=\"objects\">15</td><td class=\"num\" data-label=\"terraform plan (refresh) s\">8.94</td><td class=\"num\" data-label=\"requests\">81</td><td class=\"num\" data-label=\"choudoufu plan s\">4.32</td><td class=\"num\" data-label=\"requests\">83</td><td class=\"num\" data-label=\"ratio\">0.48x</td><td class=\"num\" data-label=\"record store: parameters, pages\">4, 1</td>"));
        let md = fs::read_to_string(d.path().join("index.md")).unwrap();
        assert!(
            md.contains("| 100 | 11.90 | 540 | 6.14 | 544 | 0.52x | – | 6.47 | 544 |"),
            "{md}"
        );
        assert!(md.contains("SIZES=\"15 100\" scripts/bench-plan.sh"));
        assert!(d.path().join(BENCH_TIME_CHART).is_file());
        assert!(d.path().join(BENCH_REQUESTS_CHART).is_file());
    }
}
