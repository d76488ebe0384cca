//! `gauntlet`: run estates and show their evidence.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};

use gauntlet::browser;
use gauntlet::estate;
use gauntlet::history;
use gauntlet::machine::{Machine, Pins};
use gauntlet::report;
use gauntlet::runner::{self, Options};
use gauntlet::site;
use gauntlet::stage::{Breaks, StageId, Toggle};

#[derive(Parser)]
#[command(
    name = "gauntlet",
    about = "Runs estates through their life on twin substrates against stock terraform"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(clap::Args)]
struct Dirs {
    /// Where the estates live.
    #[arg(long, value_name = "DIR")]
    estates_dir: Option<PathBuf>,
    /// Where evidence pages are written.
    #[arg(long, value_name = "DIR")]
    reports_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run every stage of one estate and write its evidence page.
    Run(Box<RunArgs>),
    /// List the estates and their last verdicts.
    List {
        #[command(flatten)]
        dirs: Dirs,
    },
    /// Render the evidence site from what the reports directory holds:
    /// index.html and index.md, and every estate's pages and charts.
    Site {
        /// Where the run records are, and the pages go.
        #[arg(long, value_name = "DIR")]
        reports_dir: Option<PathBuf>,
        /// Then take screenshots of every page at a desktop and a phone
        /// width with headless Chromium (CHROMIUM, else chromium on PATH)
        /// into <reports>/screens/; a blank one is an error.
        #[arg(long)]
        screens: bool,
    },
    /// List the BREAK toggles and what each corrupts.
    Breaks,
    /// Check the machine and install the pinned emulator and witness.
    Provision,
}

#[derive(clap::Args)]
struct RunArgs {
    /// The estate's name: a folder under estates/.
    #[arg(required_unless_present = "root")]
    estate: Option<String>,
    /// Run any terraform root of the aws provider instead, with no
    /// manifest: the stages that need none, the others named on the
    /// page as not run.
    #[arg(long, value_name = "DIR", conflicts_with = "estate")]
    root: Option<PathBuf>,
    /// The name of a root run's page [default: the root folder's name].
    #[arg(long, value_name = "NAME", requires = "root")]
    name: Option<String>,
    /// A root's input variable, as terraform's -var takes it (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE", requires = "root", value_parser = parse_var)]
    vars: Vec<(String, String)>,
    /// A file of a root's input variables, as terraform's -var-file
    /// takes it (repeatable).
    #[arg(long = "var-file", value_name = "FILE", requires = "root")]
    var_files: Vec<PathBuf>,
    /// Turn on a BREAK toggle (repeatable); BREAK_<NAME>=1 does the same.
    /// A root run takes the toggles whose target it derives, and refuses
    /// those that tamper with what only a manifest names.
    #[arg(long = "break", value_name = "NAME")]
    breaks: Vec<Toggle>,
    /// Loopback ports for the estate and oracle twins, as A,B; free ones
    /// are chosen when left out.
    #[arg(long, value_name = "A,B", value_parser = parse_ports)]
    ports: Option<(u16, u16)>,
    /// Run no stage after this one (a stage name such as cold-deploy).
    #[arg(long, value_name = "STAGE")]
    stop_after: Option<StageId>,
    #[command(flatten)]
    dirs: Dirs,
    /// Scratch space for working copies and logs [default: .gauntlet/<estate>].
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// A corpus estate's repository: a local clone (bare or not) holding
    /// the commit its manifest pins, instead of fetching it.
    #[arg(long, value_name = "DIR", conflicts_with = "root")]
    source_dir: Option<PathBuf>,
    /// Where corpus estates' trees are kept, by commit.
    #[arg(long, value_name = "DIR", default_value = ".gauntlet/sources")]
    source_cache: PathBuf,
}

fn parse_var(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected NAME=VALUE, as terraform's -var"))?;
    if k.trim().is_empty() {
        return Err(format!("{s:?}: the variable name is empty"));
    }
    Ok((k.trim().to_owned(), v.to_owned()))
}

fn parse_ports(s: &str) -> Result<(u16, u16), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("{s:?}: expected two ports as A,B"))?;
    let p = |x: &str| {
        x.trim()
            .parse::<u16>()
            .map_err(|_| format!("{x:?} is not a port number"))
    };
    let (a, b) = (p(a)?, p(b)?);
    if a == b {
        return Err(format!(
            "the two twins need two different ports, not {a} twice"
        ));
    }
    Ok((a, b))
}

/// The workspace: the current directory if it holds `live/aws-lane.toml`,
/// else the one this binary was built from.
fn workspace() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if cwd.join("live/aws-lane.toml").is_file() {
        return cwd;
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or(cwd)
}

/// The project-local virtualenv, or GAUNTLET_VENV.
fn venv_dir(root: &Path) -> PathBuf {
    std::env::var_os("GAUNTLET_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".venv"))
}

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gauntlet: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    let root = workspace();
    match cli.command {
        Cmd::Run(args) => {
            let RunArgs {
                estate,
                root: root_dir,
                name,
                vars,
                var_files,
                breaks,
                ports,
                stop_after,
                dirs,
                work_dir,
                source_dir,
                source_cache,
            } = *args;
            let breaks = Breaks::new(&breaks, |k| std::env::var(k).ok());
            let (estate, from_root) = match root_dir {
                Some(dir) => {
                    let name = name.unwrap_or_else(|| estate::name_of_root(&dir));
                    (name, Some((dir, estate::RootArgs { vars, var_files })))
                }
                None => (estate.unwrap_or_default(), None),
            };
            gauntlet::process::install_interrupt_handler();
            let reports = dirs.reports_dir.unwrap_or_else(|| root.join("reports"));
            let opts = Options {
                from_root,
                work_dir: work_dir.unwrap_or_else(|| root.join(".gauntlet").join(&estate)),
                estates_dir: dirs.estates_dir.unwrap_or_else(|| root.join("estates")),
                venv: venv_dir(&root),
                breaks,
                ports,
                stop_after,
                checkouts: gauntlet::corpus::Checkouts {
                    source_dir,
                    cache: root.join(source_cache),
                },
                root,
                estate,
            };
            let record = runner::run(&opts);
            if let Some(e) = &record.error {
                eprintln!("gauntlet: {e}");
            }
            for s in record.stages.iter().filter(|s| s.duration_ms.is_some()) {
                println!("{}: {}", s.title, s.verdict.word());
                if !s.failed.is_empty() {
                    println!("  failed: {}", s.failed.join(", "));
                }
            }
            println!("{}", report::timing_table(&record));
            // A name that could not be an estate gets no page of its own.
            if estate::valid_name(&record.estate) {
                let line = history::append(&reports, &record)?;
                let (json, md) = report::write(&reports, &record)
                    .with_context(|| format!("writing the evidence to {}", reports.display()))?;
                println!("{}", record.verdict_line());
                println!("Evidence: {} and {}", md.display(), json.display());
                println!("History: {}", line.display());
            }
            Ok(ExitCode::from(record.exit_code.clamp(0, 255) as u8))
        }
        Cmd::List { dirs } => {
            let estates_dir = dirs.estates_dir.unwrap_or_else(|| root.join("estates"));
            let reports = dirs.reports_dir.unwrap_or_else(|| root.join("reports"));
            let names = estate::names(&estates_dir);
            if names.is_empty() {
                bail!("no estates in {}", estates_dir.display());
            }
            let width = names.iter().map(String::len).max().unwrap_or(0);
            for name in names {
                match report::last(&reports, &name) {
                    Some(r) => println!(
                        "{name:<width$}  {}  ({}; {} at {})",
                        r.verdict_line(),
                        report::tally(&r),
                        r.started_at,
                        r.commit
                    ),
                    None => println!("{name:<width$}  never run"),
                }
                if let Some(source) = estate::source_of(&estates_dir, &name) {
                    println!("{:<width$}  root: {}", "", source.describe());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Provision => {
            let clock = gauntlet::clock::Clock::start();
            let pins = Pins::load(&root.join("live/aws-lane.toml"))?;
            let m = Machine::prepare(&clock, &pins, &venv_dir(&root))?;
            println!(
                "ready: terraform {}, aws provider {} in {}, moto {} and aws-cli {} in {}",
                m.terraform.version,
                pins.oracle.aws_provider,
                m.mirror.dir.display(),
                m.venv.moto_version,
                m.venv.awscli_version,
                m.venv.dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Site {
            reports_dir,
            screens,
        } => {
            let reports = reports_dir.unwrap_or_else(|| root.join("reports"));
            let index = site::render(&reports)?;
            println!(
                "Site: {} and {}",
                index.display(),
                reports.join("index.md").display()
            );
            if screens {
                let chromium = browser::Chromium::find()?;
                let mut faults = 0;
                for page in site::pages(&reports)? {
                    let stem = page.file_stem().unwrap_or_default().to_string_lossy();
                    for (width, size) in browser::WIDTHS {
                        let png = reports.join("screens").join(format!("{stem}-{width}.png"));
                        let shot = chromium.screenshot(&page, size, &png)?;
                        println!("Screenshot: {} ({shot})", png.display());
                        for fault in chromium.layout_faults(&page, size.0)? {
                            faults += 1;
                            println!("Layout at {width} width: {}: {fault}", page.display());
                        }
                    }
                }
                if faults > 0 {
                    eprintln!("{faults} layout fault(s): a value is cut or too small to read");
                    return Ok(ExitCode::from(1));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Breaks => {
            for t in Toggle::ALL {
                println!(
                    "{:<22} {:<28} {}: {}",
                    t.name(),
                    t.env(),
                    t.stage().title(),
                    t.what()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
