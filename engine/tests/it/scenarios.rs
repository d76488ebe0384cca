//! Scenario tests as data: each folder under `tests/scenarios/` is one case
//! a user would recognise, run in-process through the planner and apply
//! against the in-memory aws provider ([`crate::memory_provider`]).
//!
//! A case holds a root (`main.tf`, `live.hcl`, optionally `modules/`), its
//! `case.toml` (the live objects and the records before, the steps to take,
//! any force_new overrides) and what must come of it: `expected.txt`, the
//! transcript of every step as `choudoufu ... -no-color` prints it, and,
//! when a step changes the live system, `after.toml`, the objects after.
//! `tests/scenarios/README.md` describes the format;
//! `UPDATE_EXPECT=1` rewrites the expected files, `SCENARIO=part` runs the
//! cases whose name contains `part`.

use crate::memory_provider::{self, Memory};
use engine::addr::Target;
use engine::apply::{apply, SIGTERM_AFTER};
use engine::config::tree::{load_tree, Tree};
use engine::diag::{render_all, Diagnostics, Sources, Style};
use engine::graph::TreeGraph;
use engine::live::Settings;
use engine::plan::json::{value_from_json, value_json};
use engine::plan::render::human;
use engine::planner::{plan, Planned, Request};
use engine::provider::resolve::{wanted, Resolved};
use engine::record::{Record, RecordStore};
use engine::saved::{digests, SavedPlan};
use engine::session::Sessions;
use engine::value::convert::convert;
use engine::value::{Kind, Value};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The instant every scenario's plan is made at.
const PLAN_TIMESTAMP: &str = "2026-01-01T00:00:00Z";

/// The data sources the engine's binding reads, beside those the roots use.
pub const BINDING_DATA_SOURCES: [&str; 7] = [
    "aws_caller_identity",
    "aws_iam_policies",
    "aws_iam_roles",
    "aws_partition",
    "aws_region",
    "aws_resourcegroupstaggingapi_resources",
    "aws_sqs_queue",
];

pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios")
}

/// Every case folder, in name order.
pub fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("case.toml").is_file())
        .collect();
    out.sort();
    out
}

/// `case.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// What the case does, in order (see the README); one `plan` if none.
    #[serde(default)]
    steps: Vec<String>,
    /// Per type, the attributes that force a replacement, instead of those
    /// `aws.toml` names.
    #[serde(default)]
    force_new: BTreeMap<String, Vec<String>>,
    /// The live objects before.
    #[serde(default)]
    object: Vec<Object>,
    /// The record store before.
    #[serde(default)]
    record: Vec<Record>,
}

/// One live object, as `case.toml` gives it and `after.toml` shows it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Object {
    #[serde(rename = "type")]
    type_name: String,
    /// Its ID, when not the one aws would give it.
    id: Option<String>,
    #[serde(default)]
    attributes: BTreeMap<String, toml::Value>,
    #[serde(default)]
    tags: BTreeMap<String, String>,
}

/// The resource and data source types the scenarios use (their roots and
/// their live objects and records), with every type `aws.toml` shapes and
/// the data sources binding reads: what the trimmed schema must hold.
pub fn types_used() -> (BTreeSet<String>, BTreeSet<String>) {
    let block = regex::Regex::new(r#"(?m)^\s*(resource|data)\s+"([a-z0-9_]+)""#).unwrap();
    let mut resources: BTreeSet<String> = memory_provider::shapes().into_keys().collect();
    let mut data: BTreeSet<String> = BINDING_DATA_SOURCES.iter().map(|s| s.to_string()).collect();
    for case in cases() {
        for file in tf_files(&case) {
            let text = std::fs::read_to_string(&file).unwrap();
            for c in block.captures_iter(&text) {
                match &c[1] {
                    "resource" => resources.insert(c[2].to_string()),
                    _ => data.insert(c[2].to_string()),
                };
            }
        }
        let spec = read_case(&case);
        resources.extend(spec.object.iter().map(|o| o.type_name.clone()));
        resources.extend(spec.record.iter().map(|r| r.type_name.clone()));
    }
    (resources, data)
}

/// Every `.tf` file under a folder, at any depth.
fn tf_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(tf_files(&p));
        } else if p.extension().is_some_and(|x| x == "tf") {
            out.push(p);
        }
    }
    out
}

fn read_case(dir: &Path) -> Case {
    let path = dir.join("case.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_scenario_runs_as_its_transcript_says() {
    let only = std::env::var("SCENARIO").ok();
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    let mut ran = 0;
    for dir in cases() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        ran += 1;
        let outcome = std::panic::catch_unwind(|| run_case(&dir));
        let (transcript, after) = match outcome {
            Ok(r) => r,
            Err(e) => {
                let why = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{name}: the case did not run: {why}"));
                continue;
            }
        };
        let files = [("expected.txt", Some(transcript)), ("after.toml", after)];
        for (file, got) in files {
            let path = dir.join(file);
            let want = std::fs::read_to_string(&path).ok();
            if want == got {
                continue;
            }
            if update {
                match &got {
                    Some(text) => std::fs::write(&path, text).unwrap(),
                    None => std::fs::remove_file(&path).unwrap(),
                }
                continue;
            }
            failures.push(format!(
                "{name}/{file} differs (- expected, + got):\n{}",
                diff(want.as_deref().unwrap_or(""), got.as_deref().unwrap_or(""))
            ));
        }
    }
    assert!(ran > 0, "no scenario matched SCENARIO={only:?}");
    let failed: BTreeSet<&str> = failures
        .iter()
        .filter_map(|f| f.split(['/', ':']).next())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {ran} scenarios failed (UPDATE_EXPECT=1 rewrites the expected files with what the engine does now: review the difference before committing it):\n\n{}",
        failed.len(),
        failures.join("\n\n")
    );
}

/// Runs one case: its transcript, and the objects after when a step
/// changed the live system.
fn run_case(dir: &Path) -> (String, Option<String>) {
    let case = read_case(dir);
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    copy_root(dir, &root);
    let memory = Memory::new(memory_provider::schema(), memory_provider::shapes());
    for (type_name, attrs) in &case.force_new {
        memory.force_new(type_name, attrs.clone());
    }
    for o in &case.object {
        let attrs = object_attributes(&memory, o);
        memory
            .create(&o.type_name, attrs, o.id.as_deref())
            .unwrap_or_else(|e| panic!("case.toml: {e}"));
    }
    let settings = engine::live::load(&root).unwrap_or_else(|d| panic!("live.hcl: {d}"));
    let store = engine::record::local::LocalStore::open(&records_dir(&root), &settings.estate);
    for r in &case.record {
        store.put(r).unwrap();
    }
    let steps = match case.steps.is_empty() {
        true => vec!["plan".to_string()],
        false => case.steps.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // As `choudoufu` runs in the root: files are named relative to it.
    let _in_root = InDir::enter(&root);
    let mut out = String::new();
    let mut changed = false;
    for (i, step) in steps.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let step = Step::parse(step).unwrap_or_else(|e| panic!("case.toml: step {step:?}: {e}"));
        changed |= step.changes_the_live_system();
        out.push_str(&runtime.block_on(step.run(dir, &root, &memory)));
    }
    let transcript = redact(&out, work.path());
    let after = changed.then(|| objects_toml(&memory));
    (transcript, after)
}

/// The process's working directory moved to a directory until dropped.
/// It is the process's, so the runner is one test, in a process of its own
/// under nextest.
struct InDir(PathBuf);

impl InDir {
    fn enter(dir: &Path) -> InDir {
        let before = std::env::current_dir().unwrap();
        std::env::set_current_dir(dir).unwrap();
        InDir(before)
    }
}

impl Drop for InDir {
    fn drop(&mut self) {
        let _ = std::env::set_current_dir(&self.0);
    }
}

/// The root's files: its `.tf` files, `live.hcl` and `modules/`.
fn copy_root(case: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(case).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if name.ends_with(".tf") || name == "live.hcl" {
            std::fs::copy(&p, to.join(&name)).unwrap();
        } else if name == "modules" {
            copy_tree(&p, &to.join(&name));
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// An object's arguments as values of its schema's types.
fn object_attributes(memory: &Memory, o: &Object) -> BTreeMap<String, Value> {
    let schema = memory
        .schema()
        .resources
        .get(&o.type_name)
        .unwrap_or_else(|| panic!("case.toml: no resource type {} in the schema", o.type_name));
    let engine::value::Type::Object { attributes, .. } = schema.block.implied_type() else {
        unreachable!("a block's type is an object")
    };
    let mut out = BTreeMap::new();
    for (name, v) in &o.attributes {
        let ty = attributes
            .get(name)
            .unwrap_or_else(|| panic!("case.toml: {} has no attribute {name}", o.type_name));
        out.insert(
            name.clone(),
            json_value(&serde_json::to_value(v).unwrap(), ty),
        );
    }
    if !o.tags.is_empty() {
        let tags = o
            .tags
            .iter()
            .map(|(k, v)| (k.clone(), Value::string(v)))
            .collect();
        out.insert("tags".into(), Value::map(engine::value::Type::String, tags));
    }
    out
}

fn json_value(j: &serde_json::Value, ty: &engine::value::Type) -> Value {
    let none = serde_json::Value::Null;
    let ty = ty.without_optional();
    value_from_json(j, &ty, &none, &none)
        .or_else(|_| {
            convert(
                value_from_json(j, &engine::value::Type::Dynamic, &none, &none).unwrap(),
                &ty,
            )
            .map_err(|e| e.message)
        })
        .unwrap_or_else(|e| panic!("{j} is not a {}: {e}", ty.friendly_name()))
}

/// One step of a case.
#[derive(Debug)]
enum Step {
    /// `plan [-destroy] [-refresh-only] [-target=ADDR]... [-replace=ADDR]... [-out=FILE]`
    Plan { flags: Flags, out: Option<String> },
    /// `apply [-destroy] [-refresh-only] [-target=ADDR]... [-replace=ADDR]... [-stop-after=ADDR]`: auto-approved,
    /// one change at a time; `-stop-after` stops it the instant that
    /// address's change commits, as SIGTERM would.
    Apply {
        flags: Flags,
        stop_after: Option<String>,
    },
    /// `apply FILE`: a saved plan.
    ApplySaved(String),
    /// `set TYPE ID ATTR=JSON`: a change out of band.
    Set {
        type_name: String,
        id: String,
        attr: String,
        json: String,
    },
    /// `delete TYPE ID`: an object deleted out of band.
    Delete { type_name: String, id: String },
    /// `use DIR`: the root's `.tf` files replaced by those of the case's
    /// folder DIR, as a person edits the root.
    Use(String),
    /// `records`: the record store's records.
    Records,
    /// `lose-records`: the record store deleted.
    LoseRecords,
    /// `calls`: the imports and reads that reached the live system since
    /// the last `calls` (or the case's start).
    Calls,
}

#[derive(Debug, Default)]
struct Flags {
    destroy: bool,
    refresh_only: bool,
    targets: Vec<String>,
    replace: Vec<String>,
}

impl Step {
    fn parse(text: &str) -> Result<Step, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let (verb, rest) = words.split_first().ok_or("empty step")?;
        let arg = |i: usize| {
            rest.get(i)
                .map(|s| s.to_string())
                .ok_or_else(|| format!("{verb} needs {} arguments", i + 1))
        };
        let mut flags = Flags::default();
        let (mut out, mut stop_after, mut file) = (None, None, None);
        if matches!(*verb, "plan" | "apply") {
            for w in rest {
                let Some(flag) = w.strip_prefix('-') else {
                    file = Some(w.to_string());
                    continue;
                };
                let (name, value) = flag.split_once('=').unwrap_or((flag, ""));
                match (*verb, name) {
                    (_, "destroy") => flags.destroy = true,
                    (_, "refresh-only") => flags.refresh_only = true,
                    (_, "target") => flags.targets.push(value.to_string()),
                    (_, "replace") => flags.replace.push(value.to_string()),
                    ("plan", "out") => out = Some(value.to_string()),
                    ("apply", "stop-after") => stop_after = Some(value.to_string()),
                    _ => return Err(format!("unknown flag {w}")),
                }
            }
        }
        Ok(match *verb {
            "plan" if file.is_none() => Step::Plan { flags, out },
            "apply" => match file {
                Some(f) => Step::ApplySaved(f),
                None => Step::Apply { flags, stop_after },
            },
            "set" => {
                let (attr, json) = arg(2)?
                    .split_once('=')
                    .map(|(a, j)| (a.to_string(), j.to_string()))
                    .ok_or("set TYPE ID ATTR=JSON")?;
                let json = std::iter::once(json.as_str())
                    .chain(rest[3..].iter().copied())
                    .collect::<Vec<_>>()
                    .join(" ");
                Step::Set {
                    type_name: arg(0)?,
                    id: arg(1)?,
                    attr,
                    json,
                }
            }
            "delete" => Step::Delete {
                type_name: arg(0)?,
                id: arg(1)?,
            },
            "use" => Step::Use(arg(0)?),
            "records" => Step::Records,
            "lose-records" => Step::LoseRecords,
            "calls" => Step::Calls,
            other => return Err(format!("unknown step {other}")),
        })
    }

    fn changes_the_live_system(&self) -> bool {
        matches!(
            self,
            Step::Apply { .. } | Step::ApplySaved(_) | Step::Set { .. } | Step::Delete { .. }
        )
    }

    /// Runs the step; returns what it printed, after its command line.
    async fn run(&self, case: &Path, root: &Path, memory: &Memory) -> String {
        match self {
            Step::Plan { flags, out } => {
                let mut args = flags.args();
                args.extend(out.iter().map(|o| format!("-out={o}")));
                let mut text = format!("$ choudoufu plan{}\n", joined(&args));
                text.push_str(&run_plan(root, memory, flags, out.as_deref()).await);
                text
            }
            Step::Apply { flags, stop_after } => {
                let mut args = vec!["-auto-approve".to_string(), "-parallelism=1".to_string()];
                args.extend(flags.args());
                let env = match stop_after {
                    Some(a) => format!("{SIGTERM_AFTER}={a} "),
                    None => String::new(),
                };
                let mut text = format!("$ {env}choudoufu apply{}\n", joined(&args));
                text.push_str(&run_apply(root, memory, flags, stop_after.as_deref(), None).await);
                text
            }
            Step::ApplySaved(file) => {
                let mut text = format!("$ choudoufu apply -parallelism=1 {file}\n");
                let flags = Flags::default();
                text.push_str(&run_apply(root, memory, &flags, None, Some(file)).await);
                text
            }
            Step::Set {
                type_name,
                id,
                attr,
                json,
            } => {
                let schema = &memory.schema().resources[type_name];
                let ty = schema.block.implied_type().without_optional();
                let engine::value::Type::Object { attributes, .. } = ty else {
                    unreachable!()
                };
                let j: serde_json::Value =
                    serde_json::from_str(json).unwrap_or_else(|e| panic!("set {json}: {e}"));
                let v = json_value(&j, &attributes[attr]);
                memory.set(type_name, id, attr, v).unwrap();
                format!("# out of band: {type_name} {id}: {attr} = {json}\n")
            }
            Step::Delete { type_name, id } => {
                memory.delete(type_name, id).unwrap();
                format!("# out of band: {type_name} {id} deleted\n")
            }
            Step::Use(dir) => {
                for e in std::fs::read_dir(root).unwrap().flatten() {
                    if e.path().extension().is_some_and(|x| x == "tf") {
                        std::fs::remove_file(e.path()).unwrap();
                    }
                }
                let from = case.join(dir);
                for e in std::fs::read_dir(&from)
                    .unwrap_or_else(|e| panic!("use {dir}: {e}"))
                    .flatten()
                {
                    std::fs::copy(e.path(), root.join(e.file_name())).unwrap();
                }
                format!("# the root's .tf files are now those of {dir}/\n")
            }
            Step::Records => {
                let settings = engine::live::load(root).unwrap();
                let store = RecordStore::open(&records_dir(root), &settings.estate);
                let mut text = format!("# the records of estate \"{}\"\n", settings.estate);
                for r in store.all().unwrap() {
                    let _ = write!(text, "{} ({})", r.address, r.type_name);
                    if let Some(id) = &r.id {
                        let _ = write!(text, " id={id}");
                    }
                    if let Some(own) = &r.object {
                        let _ = write!(text, " object={own}");
                    }
                    for (k, v) in &r.config_only {
                        let _ = write!(text, " {k}={v}");
                    }
                    for d in &r.deposed {
                        let _ = write!(text, " deposed {}={}", d.key, d.id);
                    }
                    text.push('\n');
                }
                text
            }
            Step::LoseRecords => {
                let settings = engine::live::load(root).unwrap();
                let _ = std::fs::remove_dir_all(records_dir(root).join(&settings.estate));
                "# the record store is lost\n".to_string()
            }
            Step::Calls => {
                let mut text = "# the imports and reads since the last count\n".to_string();
                for ((rpc, type_name), n) in memory.take_calls() {
                    let _ = writeln!(text, "{rpc} {type_name}: {n}");
                }
                text
            }
        }
    }
}

impl Flags {
    fn args(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.destroy {
            out.push("-destroy".to_string());
        }
        if self.refresh_only {
            out.push("-refresh-only".to_string());
        }
        out.extend(self.targets.iter().map(|t| format!("-target={t}")));
        out.extend(self.replace.iter().map(|r| format!("-replace={r}")));
        out
    }

    fn targets(&self) -> Vec<Target> {
        self.targets
            .iter()
            .map(|t| t.parse().unwrap_or_else(|e| panic!("-target={t}: {e}")))
            .collect()
    }
}

fn joined(args: &[String]) -> String {
    args.iter().map(|a| format!(" {a}")).collect()
}

/// A root opened as `choudoufu` opens one, its providers in memory.
struct Opened {
    tree: Tree,
    settings: Settings,
    vars: BTreeMap<String, Value>,
    resolved: BTreeMap<String, Resolved>,
    store: RecordStore,
    root: PathBuf,
}

impl Opened {
    fn open(root: &Path, memory: &Memory) -> Result<Opened, String> {
        let style = Style::new(false);
        let (tree, diags) = load_tree(root);
        if diags.has_errors() {
            return Err(render_all(&diags, &tree.sources(), style));
        }
        if let Err(d) = TreeGraph::of_tree(&tree) {
            return Err(render_all(&d, &tree.sources(), style));
        }
        let settings =
            engine::live::load(root).map_err(|d| render_all(&d, &tree.sources(), style))?;
        let vars = engine::eval::inputs::collect(&tree.module, &[], &BTreeMap::new())
            .map_err(|d| render_all(&d, &tree.sources(), style))?;
        let mut resolved = BTreeMap::new();
        for t in tree.modules() {
            for (name, (source, _)) in wanted(&t.module).unwrap() {
                assert_eq!(
                    source.to_string(),
                    "registry.terraform.io/hashicorp/aws",
                    "scenarios use the aws provider only"
                );
                resolved.insert(name.clone(), memory.resolved(&name));
            }
        }
        let store = RecordStore::open(&records_dir(root), &settings.estate);
        Ok(Opened {
            tree,
            settings,
            vars,
            resolved,
            store,
            root: root.to_path_buf(),
        })
    }

    fn request(&self, flags: &Flags, plan_timestamp: &str) -> Request<'_> {
        Request {
            tree: &self.tree,
            settings: &self.settings,
            vars: self.vars.clone(),
            destroy: flags.destroy,
            use_records: true,
            targets: flags.targets(),
            replace: flags
                .replace
                .iter()
                .map(|r| r.parse().unwrap_or_else(|e| panic!("-replace={r}: {e}")))
                .collect(),
            plan_timestamp: plan_timestamp.to_string(),
            refresh_only: flags.refresh_only,
        }
    }

    fn sources(&self) -> Sources {
        self.tree.sources()
    }
}

/// The exit line of a command that failed.
fn exit(code: u8) -> String {
    format!("[exit {code}]\n")
}

fn rendered(d: &Diagnostics, sources: &Sources) -> String {
    render_all(d, sources, Style::new(false))
}

/// `choudoufu plan`: what it prints, warnings (stderr) after the plan.
async fn run_plan(root: &Path, memory: &Memory, flags: &Flags, out: Option<&str>) -> String {
    let o = match Opened::open(root, memory) {
        Ok(o) => o,
        Err(text) => return text + &exit(1),
    };
    let req = o.request(flags, PLAN_TIMESTAMP);
    let mut sessions = Sessions::new(o.resolved.clone(), memory.launcher());
    let planned = plan(&req, &mut sessions, &o.store).await;
    sessions.close().await;
    let planned = match planned {
        Ok(p) => p,
        Err(d) => return rendered(&d, &o.sources()) + &exit(1),
    };
    let mut text = human(&planned.plan, false);
    text.push_str(&rendered(&planned.warnings, &o.sources()));
    if let Some(file) = out {
        let saved = SavedPlan::new(
            &planned,
            &o.settings.estate,
            root,
            &o.vars,
            flags.destroy,
            PLAN_TIMESTAMP,
            human(&planned.plan, false),
        )
        .replacing(&flags.replace);
        saved.write(Path::new(file)).unwrap();
        let _ = writeln!(
            text,
            "\nSaved the plan to: {file}\n\nTo perform exactly these actions, run the following command to apply:\n    choudoufu apply \"{file}\""
        );
    }
    text
}

/// `choudoufu apply`: the plan (unless a saved one is applied), the
/// progress and the result, as it prints them.
async fn run_apply(
    root: &Path,
    memory: &Memory,
    flags: &Flags,
    stop_after: Option<&str>,
    saved: Option<&str>,
) -> String {
    let o = match Opened::open(root, memory) {
        Ok(o) => o,
        Err(text) => return text + &exit(1),
    };
    let saved = saved.map(|f| {
        let path = PathBuf::from(f);
        (path.clone(), SavedPlan::read(&path).unwrap())
    });
    let timestamp = saved
        .as_ref()
        .map_or(PLAN_TIMESTAMP.to_string(), |s| s.1.plan_timestamp.clone());
    let flags = match &saved {
        Some((_, s)) => Flags {
            destroy: s.destroy,
            refresh_only: s.refresh_only,
            targets: Vec::new(),
            replace: s.replace.clone(),
        },
        None => Flags {
            destroy: flags.destroy,
            refresh_only: flags.refresh_only,
            targets: flags.targets.clone(),
            replace: flags.replace.clone(),
        },
    };
    let req = o.request(&flags, &timestamp);
    let mut sessions = Sessions::new(o.resolved.clone(), memory.launcher());
    let text = apply_planned(&o, &req, &mut sessions, stop_after, saved.as_ref()).await;
    sessions.close().await;
    text
}

async fn apply_planned(
    o: &Opened,
    req: &Request<'_>,
    sessions: &mut Sessions<memory_provider::MemoryLauncher>,
    stop_after: Option<&str>,
    saved: Option<&(PathBuf, SavedPlan)>,
) -> String {
    let sources = o.sources();
    let planned: Planned = match plan(req, sessions, &o.store).await {
        Ok(p) => p,
        Err(d) => return rendered(&d, &sources) + &exit(1),
    };
    let warnings = rendered(&planned.warnings, &sources);
    let mut text = String::new();
    match saved {
        Some((path, s)) => {
            text.push_str(&warnings);
            if let Err(e) = s.check_origin(path, &o.settings.estate, &o.root, &o.vars) {
                return format!("{text}Error: {e}\n") + &exit(1);
            }
            let moved = s.moved(&digests(&planned));
            if !moved.is_empty() {
                let name = path.file_name().unwrap().to_string_lossy();
                let _ = writeln!(
                    text,
                    "\nError: The approved plan no longer matches the live system\n"
                );
                let _ = writeln!(text, "Since {name} was made, these changed in the live system or in what applying would do:");
                for m in &moved {
                    let _ = writeln!(text, "  - {m}");
                }
                let _ = writeln!(text, "\nNothing was applied. Make and review a new plan.");
                return text + &exit(3);
            }
        }
        None => {
            text.push_str(&human(&planned.plan, false));
            text.push_str(&warnings);
        }
    }
    let mut lines = Vec::new();
    let mut progress = |event: engine::apply::Event| lines.extend(event.line());
    if let Some(addr) = stop_after {
        std::env::set_var(SIGTERM_AFTER, addr);
    }
    let result = apply(req, &planned, sessions, &o.store, &mut progress, 1).await;
    std::env::remove_var(SIGTERM_AFTER);
    for l in lines {
        text.push_str(&l);
        text.push('\n');
    }
    match result {
        Ok(done) => {
            let summary = if req.destroy {
                format!("Destroy complete! Resources: {} destroyed.", done.destroyed)
            } else {
                let imported = match done.imported {
                    0 => String::new(),
                    n => format!("{n} imported, "),
                };
                format!(
                    "Apply complete! Resources: {imported}{} added, {} changed, {} destroyed.",
                    done.added, done.changed, done.destroyed
                )
            };
            let _ = writeln!(text, "\n{summary}");
            if !req.destroy {
                text.push_str(&done.outputs_text(&o.tree.module));
            }
            text
        }
        Err((done, d)) => {
            text.push_str(&rendered(&d, &sources));
            let _ = writeln!(
                text,
                "\nApplied before the error: {} added, {} changed, {} destroyed; each is recorded, and the next plan proposes exactly the rest.",
                done.added, done.changed, done.destroyed
            );
            text + &exit(1)
        }
    }
}

/// The live objects as `after.toml` shows them: each one's ID, its
/// attributes that hold something, and its tags.
fn objects_toml(memory: &Memory) -> String {
    let mut out = String::from("# The live objects after the last step.\n");
    for (type_name, id, v) in memory.objects() {
        let _ = write!(
            out,
            "\n[[object]]\ntype = {}\nid = {}\n",
            toml_string(&type_name),
            toml_string(&id)
        );
        let Kind::Object(attrs) = &v.kind else {
            continue;
        };
        let mut shown = toml::Table::new();
        for (name, a) in attrs {
            if matches!(name.as_str(), "id" | "tags" | "tags_all") || empty_value(a) {
                continue;
            }
            if let Ok(t) = toml::Value::try_from(value_json(a)) {
                shown.insert(name.clone(), t);
            }
        }
        let _ = writeln!(out, "attributes = {}", toml::Value::Table(shown));
        if let Some(tags) = v.get("tags").filter(|t| !empty_value(t)) {
            let _ = writeln!(
                out,
                "tags = {}",
                toml::Value::try_from(value_json(tags)).unwrap()
            );
        }
    }
    out
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Null, an empty string or an empty collection: what a person reading
/// the object would not miss.
fn empty_value(v: &Value) -> bool {
    match &v.kind {
        Kind::Null(_) => true,
        Kind::String(s) => s.is_empty(),
        Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => e.is_empty(),
        Kind::Map(_, m) => m.is_empty(),
        _ => false,
    }
}

/// The transcript with what differs from run to run made stable: the
/// working directory, the timings, and deposed objects' random keys
/// (numbered in order of appearance).
fn redact(text: &str, work: &Path) -> String {
    let text = text.replace(&work.display().to_string(), "$WORK");
    let timing = regex::Regex::new(r"after \d+(m\d+)?s").unwrap();
    let text = timing.replace_all(&text, "after 0s").to_string();
    let deposed = regex::Regex::new(r"\b(deposed object |deposed )([0-9a-f]{8})\b").unwrap();
    let mut keys: Vec<String> = Vec::new();
    deposed
        .replace_all(&text, |c: &regex::Captures| {
            let key = c[2].to_string();
            let n = match keys.iter().position(|k| *k == key) {
                Some(n) => n,
                None => {
                    keys.push(key);
                    keys.len() - 1
                }
            };
            format!("{}KEY{}", &c[1], n + 1)
        })
        .to_string()
}

/// A line diff of two texts, `-` for lines only in `a`, `+` only in `b`.
fn diff(a: &str, b: &str) -> String {
    let (x, y): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut lcs = vec![vec![0usize; y.len() + 1]; x.len() + 1];
    for i in (0..x.len()).rev() {
        for j in (0..y.len()).rev() {
            lcs[i][j] = match x[i] == y[j] {
                true => lcs[i + 1][j + 1] + 1,
                false => lcs[i + 1][j].max(lcs[i][j + 1]),
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < x.len() || j < y.len() {
        if i < x.len() && j < y.len() && x[i] == y[j] {
            let _ = writeln!(out, "  {}", x[i]);
            i += 1;
            j += 1;
        } else if j < y.len() && (i == x.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            let _ = writeln!(out, "+ {}", y[j]);
            j += 1;
        } else {
            let _ = writeln!(out, "- {}", x[i]);
            i += 1;
        }
    }
    out
}

/// Where a scenario keeps its records: the local folder, since the
/// in-memory provider serves no live store.
fn records_dir(root: &Path) -> std::path::PathBuf {
    root.join(engine::live::LOCAL_RECORDS)
}
