//! One run of one estate: preflight, substrate, stages, evidence.
//!
//! The runner owns the order of things and the guards. Whatever stops a run
//! (bad input, a machine that lacks something, a stage that errors, Ctrl-C)
//! still yields a [`RunRecord`] saying so, and the twins' guards stop moto
//! on the way out.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use crate::choudoufu::{Choudoufu, EngineError, EngineRoot};
use crate::clock::{Category, Clock};
use crate::conditions::{self, Conditions};
use crate::estate::{Estate, EstateError, RootArgs};
use crate::evidence::{Check, Measured, PlanRecord, RunRecord, StageRecord, Verdict, Versions};
use crate::machine::{self, Machine, MachineError, Pins};
use crate::oracle::{Oracle, OracleError};
use crate::process::{self, ProcessError};
use crate::stage::{Breaks, StageId, Toggle};
use crate::stages::{
    self, crash, day_two, lock, lost_store, neighbour, no_local_state, rename, replace, review,
    second_machine, strict, Lane, StageOutput, StagePlan, StepError, TwinView,
};
use crate::substrate::{self, both_sides, Side, SubstrateError, Twin};
use crate::witness::{Witness, WitnessError};

/// What a run is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The estate's name: its folder under `estates_dir`, or the name a
    /// root run gives its page.
    pub estate: String,
    /// A root run without a manifest (`run --root`): the root's folder and
    /// its inputs.
    pub from_root: Option<(PathBuf, RootArgs)>,
    /// The workspace: `live/` is read from here.
    pub root: PathBuf,
    pub estates_dir: PathBuf,
    /// Scratch space for the twins' working copies and logs.
    pub work_dir: PathBuf,
    pub venv: PathBuf,
    pub ports: Option<(u16, u16)>,
    pub breaks: Breaks,
    /// Run no stage after this one.
    pub stop_after: Option<StageId>,
    /// Where a corpus estate's root comes from.
    pub checkouts: crate::corpus::Checkouts,
}

/// Why a run stopped before its stages were done.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Estate(#[from] EstateError),
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error(transparent)]
    Substrate(#[from] SubstrateError),
    #[error(transparent)]
    Oracle(#[from] OracleError),
    #[error(transparent)]
    Witness(#[from] WitnessError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("interrupted by a signal; every process the run started was stopped")]
    Interrupted,
    #[error("another gauntlet run is using {dir}; wait for it to finish, or pass --work-dir to run beside it")]
    Busy { dir: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn interrupted_or<E: Into<RunError>>(e: E) -> RunError {
    if process::interrupted() {
        RunError::Interrupted
    } else {
        e.into()
    }
}

/// The command that reproduces a run.
fn reproduce(opts: &Options) -> String {
    let mut cmd = match &opts.from_root {
        None => format!("cargo run -p gauntlet -- run {}", opts.estate),
        Some((dir, args)) => {
            let mut c = format!(
                "cargo run -p gauntlet -- run --root {} --name {}",
                dir.display(),
                opts.estate
            );
            for f in &args.var_files {
                c.push_str(&format!(" --var-file {}", f.display()));
            }
            for (k, v) in &args.vars {
                c.push_str(&format!(" --var '{k}={v}'"));
            }
            c
        }
    };
    for b in opts.breaks.names() {
        cmd.push_str(&format!(" --break {b}"));
    }
    if let Some(s) = opts.stop_after {
        cmd.push_str(&format!(" --stop-after {}", s.slug()));
    }
    cmd
}

/// The commit the workspace is at, marked when it has changes outside
/// `reports/`.
fn commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let Some(head) = git(&["rev-parse", "--short=10", "HEAD"]) else {
        return "unknown (not a git checkout)".into();
    };
    match git(&["status", "--porcelain", "--", ".", ":(exclude)reports"]) {
        Some(s) if !s.is_empty() => format!("{head} (with uncommitted changes)"),
        _ => head,
    }
}

/// Run one estate and return the evidence. Never panics on bad input; a
/// panic inside (a bug) still unwinds through the guards.
pub fn run(opts: &Options) -> RunRecord {
    let clock = Clock::start();
    let ticker = clock.ticker(Duration::from_secs(15));
    let mut record = RunRecord {
        estate: opts.estate.clone(),
        description: String::new(),
        set: String::new(),
        lane: "aws".into(),
        stages: StageId::ALL
            .iter()
            .map(|s| StageRecord::not_run(*s, ""))
            .collect(),
        plans: Vec::new(),
        commit: commit(&opts.root),
        started_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        exit_code: 0,
        versions: Versions {
            engine: engine::VERSION.to_owned(),
            ..Versions::default()
        },
        conditions: Conditions::now(),
        timing: Default::default(),
        breaks: opts.breaks.names(),
        error: None,
        reproduce: reproduce(opts),
        source: None,
    };
    let result = execute(&clock, opts, &mut record);
    clock.finish();
    let _ = ticker.join();
    record.timing = clock.breakdown();
    match result {
        Ok(()) => record.exit_code = record.code(),
        Err(e) => {
            let interrupted = matches!(e, RunError::Interrupted);
            record.error = Some(e.to_string());
            record.exit_code = if interrupted { 130 } else { record.code() };
        }
    }
    record
}

fn set_stage(record: &mut RunRecord, stage: StageRecord) {
    if let Some(slot) = record.stages.iter_mut().find(|s| s.stage == stage.stage) {
        *slot = stage;
    }
}

fn plan_record(stage: StageId, plan: &StagePlan) -> PlanRecord {
    match plan {
        StagePlan::Stock(side, plan) => PlanRecord {
            stage,
            twin: side.name().to_owned(),
            tool: "terraform".into(),
            summary: plan.summary_line(),
            changes: plan
                .changes()
                .into_iter()
                .map(|(addr, actions)| format!("{addr}: {}", actions.join(",")))
                .collect(),
            text: plan.text.clone(),
        },
        StagePlan::Engine(plan) => PlanRecord {
            stage,
            twin: Side::Estate.name().to_owned(),
            tool: "choudoufu".into(),
            summary: plan.summary_line(),
            changes: plan
                .changes
                .iter()
                .map(|(addr, action)| format!("{addr}: {}", action.word()))
                .collect(),
            text: plan.text.clone(),
        },
    }
}

/// A stage being measured: when it started, and how many requests each
/// twin's moto had served by then.
struct Meter<'c> {
    clock: &'c Clock,
    started: Instant,
    logs: [PathBuf; 2],
    served: [Option<u64>; 2],
}

impl<'c> Meter<'c> {
    /// Start measuring a stage on the twins whose moto logs are `logs`
    /// (estate twin first).
    fn start(clock: &'c Clock, logs: [&Path; 2]) -> Meter<'c> {
        Meter {
            clock,
            started: Instant::now(),
            logs: logs.map(Path::to_owned),
            served: logs.map(|l| substrate::requests_served(l).ok()),
        }
    }

    /// Start measuring a stage on the lane's twins.
    fn on(lane: &Lane<'c>) -> Meter<'c> {
        let [e, o] = &lane.twins;
        Meter::start(lane.clock, [&e.moto_log, &o.moto_log])
    }

    /// What the stage spent; none when a moto log could not be read.
    fn measured(&self) -> Option<Measured> {
        let since = |i: usize| {
            let before = self.served[i]?;
            Some(
                substrate::requests_served(&self.logs[i])
                    .ok()?
                    .saturating_sub(before),
            )
        };
        let ms = |c| self.clock.spent_since(c, self.started).as_millis() as u64;
        Some(Measured {
            engine_ms: ms(Category::Engine),
            stock_ms: ms(Category::Terraform),
            estate_requests: since(Side::Estate as usize)?,
            oracle_requests: since(Side::Oracle as usize)?,
        })
    }
}

/// Record a stage's plans and turn its assertions into its row.
fn stage_row(
    record: &mut RunRecord,
    stage: StageId,
    meter: &Meter,
    breaks: &Breaks,
    result: Result<StageOutput, StepError>,
) -> Result<StageRecord, RunError> {
    let duration_ms = Some(meter.started.elapsed().as_millis() as u64);
    let measured = meter.measured();
    let toggles: Vec<String> = Toggle::ALL
        .iter()
        .filter(|t| t.stage() == stage && breaks.on(**t))
        .map(|t| format!("{}=1 {}", t.env(), t.what()))
        .collect();
    let (verdict, mut detail, checks) = match result {
        Err(e) if e.interrupted() => return Err(RunError::Interrupted),
        Err(StepError::NotDerived(why)) => {
            return Ok(StageRecord::not_run(stage, &format!("not run: {why}")))
        }
        Err(e) => (Verdict::Error, e.to_string(), Vec::new()),
        Ok(StageOutput {
            assertions,
            summary,
            plans,
        }) => {
            record
                .plans
                .extend(plans.iter().map(|p| plan_record(stage, p)));
            let checks: Vec<Check> = assertions
                .into_iter()
                .map(|a| Check {
                    toggle: a.toggle,
                    holds: a.holds,
                    seen: a.seen,
                })
                .collect();
            if checks.is_empty() {
                (
                    Verdict::Error,
                    format!("{summary}: the stage made no assertion"),
                    checks,
                )
            } else if checks.iter().all(|c| c.holds) {
                (Verdict::Pass, summary, checks)
            } else {
                (Verdict::Fail, summary, checks)
            }
        }
    };
    if !toggles.is_empty() {
        detail.push_str(&format!(". {}", toggles.join("; ")));
    }
    let failed = checks
        .iter()
        .filter(|c| !c.holds)
        .map(|c| c.toggle.name().to_owned())
        .collect();
    Ok(StageRecord {
        stage,
        title: stage.title().to_owned(),
        headline: stage.headline(),
        verdict,
        duration_ms,
        detail,
        failed,
        checks,
        measured,
    })
}

fn execute(clock: &Clock, opts: &Options, record: &mut RunRecord) -> Result<(), RunError> {
    clock.set_stage("Preflight");
    let pins = Pins::load(&opts.root.join("live/aws-lane.toml"))?;
    record.versions.terraform_pin = pins.oracle.terraform.clone();
    record.versions.aws_provider = pins.oracle.aws_provider.clone();
    let mut estate = match &opts.from_root {
        Some((dir, args)) => Estate::from_root(dir, &opts.estate, args)?,
        None => Estate::load(&opts.estates_dir, &opts.estate, &opts.checkouts)?,
    };
    if let Some(source) = &estate.source {
        record.source = Some(source.clone());
        record.reproduce = format!(
            "{}
# it fetches {} at {}; where the network does not reach it, add --source-dir <a local clone of it>",
            record.reproduce, source.git, source.rev
        );
    }
    estate.check_breaks(&opts.breaks)?;
    record.description = estate.description.clone();
    record.set = estate.set.clone();
    record.lane = estate.lane.clone();
    let Machine {
        terraform,
        mirror,
        venv,
    } = Machine::prepare(clock, &pins, &opts.venv).map_err(interrupted_or)?;
    record.versions.terraform = terraform.version.clone();
    let choudoufu = Choudoufu::find(clock).map_err(interrupted_or)?;
    record.versions.engine = choudoufu.version.clone();
    record.conditions.profile = conditions::profile_of(&choudoufu.path);
    record.versions.emulator = venv.moto_version.clone();
    record.versions.witness = venv.awscli_version.clone();
    let (estate_port, oracle_port) = substrate::choose_ports(opts.ports)?;

    let work = &opts.work_dir;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| RunError::Io { path, source }
    };
    // One run at a time per work dir: the next step empties it.
    let parent = work.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(io(parent))?;
    let lock_path = work.with_extension("lock");
    let lock = fs::File::create(&lock_path).map_err(io(&lock_path))?;
    lock.try_lock().map_err(|e| match e {
        fs::TryLockError::WouldBlock => RunError::Busy { dir: work.clone() },
        fs::TryLockError::Error(source) => RunError::Io {
            path: lock_path.clone(),
            source,
        },
    })?;
    if work.exists() {
        fs::remove_dir_all(work).map_err(io(work))?;
    }
    fs::create_dir_all(work).map_err(io(work))?;
    let cli_config = work.join("terraform.rc");
    machine::write_cli_config(&cli_config, &mirror, machine::user_cli_config().as_deref())?;

    clock.set_stage("Substrate");
    let (e, o) = both_sides(|side| {
        let port = match side {
            Side::Estate => estate_port,
            Side::Oracle => oracle_port,
        };
        Twin::start(clock, &venv.python, side, port, work)
    });
    let twins = [e.map_err(interrupted_or)?, o.map_err(interrupted_or)?];
    if std::env::var("GAUNTLET_TEST_PANIC").as_deref() == Ok("substrate") {
        panic!("GAUNTLET_TEST_PANIC=substrate: a deliberate panic with both twins running");
    }
    let oracles = twins
        .iter()
        .map(|t| {
            Ok(Oracle::prepare(
                t.side,
                work,
                &estate,
                &t.endpoint(),
                &terraform,
                &cli_config,
            )?)
        })
        .collect::<Result<Vec<Oracle>, RunError>>()?;
    let (ie, io_) = both_sides(|side| {
        let o = &oracles[side as usize];
        clock.say(&format!("terraform init and validate on the {side}"));
        o.init(clock)?;
        o.run(clock, &["validate", "-no-color"])
    });
    ie.map_err(interrupted_or)?;
    io_.map_err(interrupted_or)?;
    // What the root's remote calls declare is known once init installed
    // them.
    estate.installed(&oracles[Side::Oracle as usize].dir)?;
    record.description = estate.description.clone();
    let kinds = stages::kinds(&estate);

    // The engine runs in the estate twin's working copy, beside the state
    // stock's cold deploy writes there, with the estate's live settings.
    let engine_dir = oracles[Side::Estate as usize].dir.clone();
    // A root run and a corpus estate name their estate themselves; a
    // root's own live.hcl, if it has one, is not the run's.
    let live = engine_dir.join("live.hcl");
    match (&opts.from_root, &estate.source) {
        (Some(_), _) | (None, Some(_)) => fs::write(
            &live,
            format!(
                "# Written by the gauntlet: the engine's settings for this run.\nlive {{\n  estate = \"{}\"\n}}\n",
                estate.name
            ),
        )
        .map_err(io(&live))?,
        (None, None) => {
            let from = estate.dir.join("live.hcl");
            fs::copy(&from, &live).map_err(io(&from))?;
        }
    }
    let engine_root = EngineRoot::new(
        &choudoufu,
        &engine_dir,
        &work.join("estate").join("engine-home"),
        &cli_config,
        &work.join("choudoufu-cache"),
        &twins[Side::Estate as usize].endpoint(),
    )?
    .in_tree(oracles[Side::Estate as usize].tree());

    let mut witnesses = Vec::new();
    for t in &twins {
        witnesses.push(Witness::new(
            clock,
            t.side,
            &venv.aws,
            &t.endpoint(),
            &estate.region,
            work,
        )?);
    }

    // Cold deploy, from a substrate holding only the pre-existing objects.
    clock.set_stage(StageId::ColdDeploy.title());
    let meter = Meter::start(clock, [&twins[0].log, &twins[1].log]);
    let (be, bo) =
        both_sides(|side| stages::seed_preexisting(&estate, &witnesses[side as usize], &kinds));
    let baselines = [be.map_err(interrupted_or)?, bo.map_err(interrupted_or)?];
    let mut oracles = oracles.into_iter();
    let mut witnesses = witnesses.into_iter();
    let mut baselines = baselines.into_iter();
    let mut view = |side| -> Option<TwinView> {
        Some(TwinView {
            side,
            oracle: oracles.next()?,
            witness: witnesses.next()?,
            baseline: baselines.next()?,
            moto_log: twins[side as usize].log.clone(),
        })
    };
    let (Some(ve), Some(vo)) = (view(Side::Estate), view(Side::Oracle)) else {
        unreachable!("two twins were started");
    };
    let lane = Lane {
        clock,
        estate: &estate,
        breaks: &opts.breaks,
        kinds,
        twins: [ve, vo],
        engine: engine_root,
    };
    let mut cold = None;
    let greenfield_runs = opts
        .stop_after
        .is_none_or(|last| last >= StageId::GreenfieldApply);
    let result = stages::cold_deploy(&lane, greenfield_runs).map(|(output, outcome)| {
        cold = Some(outcome);
        output
    });
    let row = stage_row(record, StageId::ColdDeploy, &meter, &opts.breaks, result)?;
    clock.say(&verdict_line(&row));
    set_stage(record, row);

    // The engine's stages on the estate twin, in the page's order. A stage
    // runs when cold deploy completed and no engine stage before it errored;
    // one whose assertions failed does not stop the next, whose own
    // assertions then say what it found.
    let stop_after = opts.stop_after;
    let stopped = |s: StageId| stop_after.is_some_and(|last| s > last);
    let mut chain = Chain {
        lane: &lane,
        cold: cold.as_ref(),
        blocked: match &cold {
            Some(_) => None,
            None => Some("not run: cold deploy did not complete".into()),
        },
        opts,
    };
    // Plan, review, apply comes after teardown on the page but runs before
    // it: stock's half needs the oracle twin's estate still standing.
    chain.run(
        record,
        &[
            (StageId::Migrate, day_two::migrate),
            (StageId::ReplanFromNothing, day_two::replan),
            (StageId::NoOpApply, |l, _| day_two::noop_apply(l)),
            (StageId::DriftAndReconverge, day_two::drift),
            (StageId::Rename, rename::rename),
            (StageId::RemoveABlock, day_two::remove_block),
            (StageId::ChangeCount, day_two::change_count),
            (
                StageId::ReplaceWithCreateBeforeDestroy,
                replace::replace_with_create_before_destroy,
            ),
            (StageId::CrashMidApply, crash::crash_mid_apply),
            (StageId::PlanReviewApply, review::plan_review_apply),
        ],
    )?;

    // Teardown: stock on the oracle twin and, when the engine's stages
    // completed, the engine on the estate twin.
    match &cold {
        _ if stopped(StageId::Teardown) => {
            set_stage(record, stopped_row(StageId::Teardown, stop_after));
        }
        Some(_) => {
            clock.set_stage(StageId::Teardown.title());
            let meter = Meter::on(&lane);
            let with_engine = chain.blocked.is_none();
            let result = stages::teardown(&lane, with_engine);
            let mut row = stage_row(record, StageId::Teardown, &meter, &opts.breaks, result)?;
            if let (false, Some(why)) = (with_engine, &chain.blocked) {
                row.detail.push_str(&format!(
                    ". choudoufu destroy on the estate twin {}",
                    why.trim_start_matches("not run: ")
                        .replace(" did not complete", " did not complete, so it was not run")
                ));
            }
            clock.say(&verdict_line(&row));
            if row.verdict == Verdict::Error {
                chain.blocked = Some("not run: teardown did not complete".into());
            } else if !with_engine {
                chain.blocked = Some("not run: the engine's teardown did not run".into());
            }
            set_stage(record, row);
        }
        None => set_stage(
            record,
            StageRecord::not_run(StageId::Teardown, "not run: cold deploy did not complete"),
        ),
    }

    // Greenfield apply on the emptied estate twin, then the stages past the
    // headline on the estate it applied.
    chain.run(
        record,
        &[
            (StageId::GreenfieldApply, day_two::greenfield),
            (StageId::StrictProfile, strict::strict_profile),
            (
                StageId::PlanWithNoLocalState,
                no_local_state::plan_with_no_local_state,
            ),
            (StageId::ASecondMachine, second_machine::a_second_machine),
            (StageId::LostRecordStore, lost_store::lost_record_store),
            (StageId::TwoAppliesAtOnce, lock::two_applies_at_once),
            (StageId::TwoEstatesOnOneTwin, neighbour::two_estates),
        ],
    )?;
    clock.set_stage("Stopping the twins");
    drop(lane);
    for t in twins {
        clock.say(&format!(
            "stopping moto_server (pid {}) for the {}",
            t.pid(),
            t.side
        ));
        drop(t);
    }
    Ok(())
}

type StageFn = fn(&Lane, &stages::ColdOutcome) -> Result<StageOutput, StepError>;

/// The engine's stages in the order they run, each on what the one before
/// left: a stage is not run once cold deploy or an engine stage before it
/// did not complete (`blocked` says which).
struct Chain<'l, 'a> {
    lane: &'l Lane<'a>,
    cold: Option<&'l stages::ColdOutcome>,
    blocked: Option<String>,
    opts: &'l Options,
}

impl Chain<'_, '_> {
    fn run(
        &mut self,
        record: &mut RunRecord,
        stages: &[(StageId, StageFn)],
    ) -> Result<(), RunError> {
        let stop_after = self.opts.stop_after;
        for &(stage, f) in stages {
            if stop_after.is_some_and(|last| stage > last) {
                set_stage(record, stopped_row(stage, stop_after));
                continue;
            }
            if stage == StageId::TwoEstatesOnOneTwin && self.lane.estate.neighbour.is_none() {
                let why = match self.opts.from_root {
                    Some(_) => "not run: its moves are named by the manifest's [neighbour], and a root run has no estate.toml",
                    None => "not run: the estate declares no [neighbour] in estate.toml",
                };
                set_stage(record, StageRecord::not_run(stage, why));
                continue;
            }
            let (Some(cold), None) = (self.cold, &self.blocked) else {
                let why = self.blocked.as_deref().unwrap_or("");
                set_stage(record, StageRecord::not_run(stage, why));
                continue;
            };
            let clock = self.lane.clock;
            clock.set_stage(stage.title());
            let meter = Meter::on(self.lane);
            let result = f(self.lane, cold);
            let row = stage_row(record, stage, &meter, &self.opts.breaks, result)?;
            clock.say(&verdict_line(&row));
            if row.verdict == Verdict::Error {
                self.blocked = Some(format!("not run: {} did not complete", stage.title()));
            }
            set_stage(record, row);
        }
        Ok(())
    }
}

/// The progress line for a stage's verdict; an error carries its detail,
/// since nothing after it says why the stage stopped.
fn verdict_line(row: &StageRecord) -> String {
    match row.verdict {
        Verdict::Error => format!("{}: {}: {}", row.title, row.verdict.word(), row.detail),
        Verdict::Fail => {
            let broken: Vec<String> = row
                .checks
                .iter()
                .filter(|c| !c.holds)
                .map(|c| {
                    format!(
                        "{} (passes when {}): {}",
                        c.toggle.name(),
                        c.toggle.bar(),
                        c.seen
                    )
                })
                .collect();
            format!("{}: fail: {}", row.title, broken.join("; "))
        }
        _ => format!("{}: {}", row.title, row.verdict.word()),
    }
}

/// The row of a stage after `--stop-after`.
fn stopped_row(stage: StageId, last: Option<StageId>) -> StageRecord {
    let last = last.map(|l| l.title().to_lowercase()).unwrap_or_default();
    StageRecord::not_run(stage, &format!("not run: the run stopped after {last}"))
}

/// Map a process error at the edge to a run error.
impl From<ProcessError> for RunError {
    fn from(e: ProcessError) -> RunError {
        match e {
            ProcessError::Interrupted { .. } => RunError::Interrupted,
            e => RunError::Machine(MachineError::Process(e)),
        }
    }
}
