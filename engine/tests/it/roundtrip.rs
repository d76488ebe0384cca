//! The catalogue's proofs: each root under `tests/fixtures/catalogue/`
//! through its life on one moto, with stock terraform as the oracle.
//!
//! Stock terraform creates the root; `choudoufu migrate` stamps or records
//! every instance of its state; the engine's plan from the live system
//! binds everything with no change (and, without the record store, proposes
//! creating only the instances nothing but a record finds); the
//! out-of-band changes of the root's `drift.toml`, made with the AWS CLI,
//! are planned by the engine as stock plans them; the engine's apply
//! reconverges and its destroy leaves nothing its own next plan finds, which
//! stock's own refresh confirms by proposing to create every instance again.
//!
//! Stock's working directory ignores the marker tags (the provider's
//! `ignore_tags`), so its plans compare with the engine's.

use crate::support::{flat, text, Moto, Workdir};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

fn root_dir(name: &str) -> PathBuf {
    crate::catalogue::roots_dir().join(name)
}

/// The provider configuration pointing every service the provider knows
/// at `endpoint`, with fake credentials; `ignore_markers` adds the markers
/// to the provider's `ignore_tags`, for stock's directory.
fn override_file(endpoint: &str, services: &[String], ignore_markers: bool) -> String {
    let endpoints: String = services
        .iter()
        .map(|s| format!("    {s} = \"{endpoint}\"\n"))
        .collect();
    let ignore = match ignore_markers {
        true => "  ignore_tags {\n    keys = [\"tofu-estate\", \"tofu-address\"]\n  }\n",
        false => "",
    };
    format!(
        "provider \"aws\" {{\n  region                      = \"us-east-1\"\n  access_key                  = \"test\"\n  secret_key                  = \"test\"\n  skip_credentials_validation = true\n  skip_metadata_api_check     = true\n  skip_requesting_account_id  = true\n  s3_use_path_style           = true\n{ignore}  endpoints {{\n{endpoints}  }}\n}}\n"
    )
}

/// Every endpoint name of the provider's `endpoints` block but the
/// aliases terraform warns about (`cloudwatchevents` beside `events`),
/// from its schema as `choudoufu providers schema -json` prints it, read
/// once per test process.
fn endpoint_names() -> Vec<String> {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            let w = Workdir::new();
            crate::support::aws_root(w.dir.path());
            crate::support::write_live(w.dir.path(), "schema");
            w.init();
            let out = w.run(
                Path::new(env!("CARGO_BIN_EXE_choudoufu")),
                &["providers", "schema", "-json"],
            );
            assert!(out.status.success(), "{}", text(&out));
            let schema: Json = serde_json::from_slice(&out.stdout).unwrap();
            let attrs = &schema["provider_schemas"]["registry.terraform.io/hashicorp/aws"]
                ["provider"]["block"]["block_types"]["endpoints"]["block"]["attributes"];
            let aliases: BTreeSet<&str> = ALIASES
                .iter()
                .flat_map(|group| group.iter().skip(1).copied())
                .collect();
            attrs
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| !aliases.contains(k.as_str()))
                .cloned()
                .collect()
        })
        .clone()
}

/// The provider's endpoint names that name one service, first name kept.
const ALIASES: &[&[&str]] = &[
    &["amp", "prometheus", "prometheusservice"],
    &["appautoscaling", "applicationautoscaling"],
    &["appintegrations", "appintegrationsservice"],
    &["ce", "costexplorer"],
    &["cloudcontrol", "cloudcontrolapi"],
    &["cloudhsmv2", "cloudhsm"],
    &["cognitoidp", "cognitoidentityprovider"],
    &["configservice", "config"],
    &["cur", "costandusagereportservice"],
    &["databrew", "gluedatabrew"],
    &["deploy", "codedeploy"],
    &["dms", "databasemigration", "databasemigrationservice"],
    &["ds", "directoryservice"],
    &["elasticbeanstalk", "beanstalk"],
    &["elasticsearch", "es", "elasticsearchservice"],
    &["elb", "elasticloadbalancing"],
    &["elbv2", "elasticloadbalancingv2"],
    &["events", "eventbridge", "cloudwatchevents"],
    &["evidently", "cloudwatchevidently"],
    &["grafana", "managedgrafana", "amg"],
    &["inspector2", "inspectorv2"],
    &["kafka", "msk"],
    &[
        "lexmodels",
        "lexmodelbuilding",
        "lexmodelbuildingservice",
        "lex",
    ],
    &["lexv2models", "lexmodelsv2"],
    &["location", "locationservice"],
    &["logs", "cloudwatchlog", "cloudwatchlogs"],
    &["oam", "cloudwatchobservabilityaccessmanager"],
    &["opensearch", "opensearchservice"],
    &["osis", "opensearchingestion"],
    &["rbin", "recyclebin"],
    &["redshiftdata", "redshiftdataapiservice"],
    &["resourcegroupstaggingapi", "resourcegroupstagging"],
    &["rum", "cloudwatchrum"],
    &["s3", "s3api"],
    &[
        "serverlessrepo",
        "serverlessapprepo",
        "serverlessapplicationrepository",
    ],
    &["servicecatalogappregistry", "appregistry"],
    &["sfn", "stepfunctions"],
    &["simpledb", "sdb"],
    &["transcribe", "transcribeservice"],
];

/// Copies a root's files (not its subdirectories' state) into `to`.
fn copy_root(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let path = e.path();
        let name = e.file_name();
        if path.is_dir() {
            std::fs::create_dir_all(to.join(&name)).unwrap();
            copy_root(&path, &to.join(&name));
        } else if name != "drift.toml" {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// One out-of-band change of `drift.toml`.
#[derive(Debug, serde::Deserialize)]
struct Drift {
    address: String,
    /// The AWS CLI's arguments, `{attr}` filled from the instance's state.
    args: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
struct DriftFile {
    /// Taggable types whose objects moto's tagging API does not list, so
    /// that only their records find them (and their parts) on moto.
    #[serde(default)]
    unlisted: Vec<String>,
    #[serde(default)]
    change: Vec<Drift>,
    /// Instances whose object moto keeps after its owner's deletion,
    /// where AWS deletes it with the owner (a deleted VPC's default ACL):
    /// stock's refresh still reads them after any destroy, stock's own
    /// included. The engine's plan must still create them.
    #[serde(default)]
    outlive: Vec<String>,
}

/// A state resource's address without an index, in its module if any.
fn resource_address(r: &Json) -> String {
    let own = format!(
        "{}.{}",
        r["type"].as_str().unwrap(),
        r["name"].as_str().unwrap()
    );
    match r["module"].as_str() {
        Some(m) => format!("{m}.{own}"),
        None => own,
    }
}

/// Every managed instance of a state file, by address, with its attributes.
fn instances(state: &Json) -> BTreeMap<String, Json> {
    let mut out = BTreeMap::new();
    for r in state["resources"].as_array().into_iter().flatten() {
        if r["mode"] != "managed" {
            continue;
        }
        let base = resource_address(r);
        for i in r["instances"].as_array().into_iter().flatten() {
            let addr = match &i["index_key"] {
                Json::Number(n) => format!("{base}[{n}]"),
                Json::String(s) => format!("{base}[{}]", Json::String(s.clone())),
                _ => base.clone(),
            };
            out.insert(addr, i["attributes"].clone());
        }
    }
    out
}

/// The resources (by address, without index) each instance depends on, as
/// terraform keeps them in its state: every one, however indirect.
fn dependencies(state: &Json) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for r in state["resources"].as_array().into_iter().flatten() {
        let base = resource_address(r);
        for i in r["instances"].as_array().into_iter().flatten() {
            let deps = i["dependencies"].as_array().into_iter().flatten();
            out.entry(base.clone())
                .or_insert_with(BTreeSet::new)
                .extend(deps.filter_map(|d| d.as_str().map(str::to_string)));
        }
    }
    out
}

/// A plan's changes other than no-ops: address to its actions and the
/// top-level attributes that change (or become unknown).
fn changes(show_json: &[u8]) -> BTreeMap<String, (Vec<String>, BTreeSet<String>)> {
    let doc: Json = serde_json::from_slice(show_json).unwrap_or_else(|e| {
        panic!(
            "show -json printed no JSON ({e}): {}",
            String::from_utf8_lossy(show_json)
        )
    });
    let mut out = BTreeMap::new();
    for rc in doc["resource_changes"].as_array().into_iter().flatten() {
        let c = &rc["change"];
        let actions: Vec<String> = c["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        if actions == ["no-op"] || actions == ["read"] {
            continue;
        }
        let mut attrs = BTreeSet::new();
        let keys: BTreeSet<&String> = [&c["before"], &c["after"]]
            .into_iter()
            .filter_map(Json::as_object)
            .flat_map(|o| o.keys())
            .collect();
        for k in keys {
            let unknown = c["after_unknown"][k.as_str()] == Json::Bool(true);
            if unknown || c["before"].get(k) != c["after"].get(k) {
                attrs.insert(k.clone());
            }
        }
        let addr = rc["address"].as_str().unwrap().to_string();
        out.insert(addr, (actions, attrs));
    }
    out
}

fn ok(o: &Output, what: &str) {
    assert!(o.status.success(), "{what} failed:\n{}", text(o));
}

/// Fills `{attr}` in one CLI argument from an instance's attributes.
fn fill(arg: &str, attrs: &Json) -> String {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&rest[..open]);
        let name = &rest[open + 1..open + close];
        // Braces around anything but a name are the CLI's own shorthand.
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push('{');
            rest = &rest[open + 1..];
            continue;
        }
        match attrs.get(name) {
            Some(Json::String(s)) => out.push_str(s),
            Some(v) if !v.is_null() => out.push_str(&v.to_string()),
            _ => panic!("drift argument {arg:?}: the instance has no attribute {name}"),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// The families of the root's types, as `providers identity -json` says.
fn families(w: &Workdir) -> BTreeMap<String, Json> {
    let out = w.run(
        Path::new(env!("CARGO_BIN_EXE_choudoufu")),
        &["providers", "identity", "-json"],
    );
    ok(&out, "providers identity");
    let doc: Json = serde_json::from_slice(&out.stdout).unwrap();
    doc["provider_identities"]["registry.terraform.io/hashicorp/aws"]
        .as_object()
        .unwrap()
        .clone()
        .into_iter()
        .collect()
}

fn round_trip(name: &str) {
    let root = root_dir(name);
    let estate = format!("rt-{}", name.replace('_', "-"));
    let moto = Moto::start();
    let services = endpoint_names();
    let tf = crate::support::terraform();

    // Stock terraform creates the root.
    let stock = Workdir::new();
    copy_root(&root, stock.dir.path());
    std::fs::write(
        stock.dir.path().join("zz_moto.tf"),
        override_file(&moto.endpoint, &services, true),
    )
    .unwrap();
    ok(
        &stock.run(&tf, &["init", "-input=false", "-no-color"]),
        "terraform init",
    );
    let started = std::time::Instant::now();
    ok(
        &stock.run(
            &tf,
            &["apply", "-auto-approve", "-input=false", "-no-color"],
        ),
        "terraform apply",
    );
    eprintln!("{name}: stock apply {:?}", started.elapsed());
    let state_path = stock.dir.path().join("terraform.tfstate");
    let state: Json = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    let all = instances(&state);

    // The engine's directory: the same root, its estate, no marker ignored.
    let ours = Workdir::new();
    copy_root(&root, ours.dir.path());
    std::fs::write(
        ours.dir.path().join("zz_moto.tf"),
        override_file(&moto.endpoint, &services, false),
    )
    .unwrap();
    crate::support::write_live(ours.dir.path(), &estate);
    ok(&ours.engine(&["init", "-input=false"]), "choudoufu init");
    let family = families(&ours);

    // migrate takes every instance, reading each class of object back:
    // an argument the catalogue lists as never read back that the read
    // returns is logged, and must not be.
    let state_arg = state_path.display().to_string();
    let migrated = ours
        .command(Path::new(env!("CARGO_BIN_EXE_choudoufu")))
        .args(["migrate", "-state", &state_arg, "-no-color"])
        .env("CHOUDOUFU_LOG", "warn")
        .output()
        .unwrap();
    ok(&migrated, "choudoufu migrate");
    let m = text(&migrated);
    assert!(
        flat(&m).contains(" 0 failed, 0 skipped."),
        "migrate left instances out:\n{m}"
    );
    assert!(
        !m.contains("the catalogue lists an argument as never read back"),
        "a catalogue entry names an argument the read returns:\n{m}"
    );

    let drift: DriftFile =
        toml::from_str(&std::fs::read_to_string(root.join("drift.toml")).unwrap()).unwrap();

    // The plan from the live system binds everything, changing nothing.
    let plan = ours.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(
        plan.status.code(),
        Some(0),
        "the replan proposes changes:\n{}",
        text(&plan)
    );
    // It says how it found each instance of a type outside the catalogue.
    for addr in all.keys() {
        let ty = addr
            .parse::<engine::addr::ResourceInstanceAddr>()
            .unwrap()
            .type_name;
        if family[&ty]["catalogued"] == false {
            assert!(
                text(&plan).contains(&format!("  - {addr}: found by ")),
                "the plan does not say how it found {addr}:\n{}",
                text(&plan)
            );
        }
    }
    // Without the record store only what nothing but a record finds is
    // new, and an object of a markerless type that configuration names is
    // refused by address, never adopted.
    let type_of = |addr: &str| {
        addr.parse::<engine::addr::ResourceInstanceAddr>()
            .unwrap()
            .type_name
    };
    let refused: Vec<&String> = all
        .keys()
        .filter(|a| {
            let f = &family[&type_of(a)];
            f["family"] == "record" && f["found_by"] != "its record only"
        })
        .collect();
    let bare = ours.engine(&["plan", "-no-records", "-out", "bare.plan"]);
    if refused.is_empty() {
        assert!(bare.status.success(), "{}", text(&bare));
        let shown = ours.engine(&["show", "-json", "bare.plan"]);
        for (addr, (actions, _)) in changes(&shown.stdout) {
            let ty = type_of(&addr);
            let f = &family[&ty];
            let record_only = f["family"] != "tagged" && f["found_by"] == "its record only";
            // A part of an object only its record finds on moto is new
            // with it: its import ID names the parent's.
            let parent = f["parent"]["type"].as_str().unwrap_or_default();
            let unlisted =
                drift.unlisted.contains(&ty) || drift.unlisted.iter().any(|u| u == parent);
            if record_only || unlisted {
                assert_eq!(actions, ["create"], "without records, {addr} ({f})");
            } else {
                // Found by its marker or its configuration: changed only
                // where it names an object nothing but a record finds.
                assert!(
                    actions != ["create"] && actions != ["delete"],
                    "without records the plan proposes {actions:?} for {addr} ({f})"
                );
            }
        }
    } else {
        let out = flat(&text(&bare));
        assert_eq!(bare.status.code(), Some(1), "{out}");
        // What depends on a refused instance is not planned at all, as
        // terraform plans nothing downstream of an error.
        let deps = dependencies(&state);
        let resource = |a: &str| a.split('[').next().unwrap_or(a).to_string();
        let refused: Vec<&String> = refused
            .iter()
            .copied()
            .filter(|a| {
                !deps
                    .get(&resource(a))
                    .is_some_and(|up| refused.iter().any(|r| up.contains(&resource(r))))
            })
            .collect();
        for a in &refused {
            assert!(
                out.contains(&format!("{a} would bind to the live object")),
                "without records {a} is not refused: {out}"
            );
        }
        assert_eq!(
            out.matches(" would bind to the live object").count(),
            refused.len(),
            "without records the plan refuses more than {refused:?}: {out}"
        );
    }
    let stock_plan = stock.run(&tf, &["plan", "-detailed-exitcode", "-no-color"]);
    assert_eq!(
        stock_plan.status.code(),
        Some(0),
        "after migrate stock's plan proposes changes:\n{}",
        text(&stock_plan)
    );

    // Out-of-band changes, planned alike.
    for d in &drift.change {
        let attrs = all.get(&d.address).unwrap_or_else(|| {
            panic!("drift.toml names {}, which stock did not create", d.address)
        });
        let args: Vec<String> = d.args.iter().map(|a| fill(a, attrs)).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        moto.aws(&args);
    }
    ok(
        &stock.run(&tf, &["plan", "-out=stock.plan", "-no-color"]),
        "terraform plan",
    );
    let theirs = changes(&stock.run(&tf, &["show", "-json", "stock.plan"]).stdout);
    ok(
        &ours.engine(&["plan", "-out", "drift.plan"]),
        "choudoufu plan",
    );
    let mine = changes(&ours.engine(&["show", "-json", "drift.plan"]).stdout);
    for d in &drift.change {
        assert!(
            theirs.contains_key(&d.address),
            "stock plans nothing for {} after its drift: drift.toml's change has no effect",
            d.address
        );
    }
    assert_eq!(
        mine, theirs,
        "the engine plans the drift otherwise than stock"
    );

    // The engine reconverges; both then plan nothing.
    ok(&ours.engine(&["apply", "-auto-approve"]), "choudoufu apply");
    let replan = ours.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
    let stock_replan = stock.run(&tf, &["plan", "-detailed-exitcode", "-no-color"]);
    assert_eq!(
        stock_replan.status.code(),
        Some(0),
        "{}",
        text(&stock_replan)
    );

    // With every block removed, the sweep plans the destroy of every
    // instance, as stock plans it for a state whose blocks are all gone:
    // found by its marker or by its record (in the live system, which a
    // second working directory of the same estate shares).
    let delete = vec!["delete".to_string()];
    let emptied = Workdir::new();
    std::fs::write(
        emptied.dir.path().join("versions.tf"),
        "terraform {\n  required_providers {\n    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"5.100.0\"\n    }\n  }\n}\n",
    )
    .unwrap();
    std::fs::write(
        emptied.dir.path().join("zz_moto.tf"),
        override_file(&moto.endpoint, &services, false),
    )
    .unwrap();
    crate::support::write_live(emptied.dir.path(), &estate);
    ok(&emptied.engine(&["init", "-input=false"]), "choudoufu init");
    let swept_plan = emptied.engine(&["plan", "-out", "swept.plan"]);
    ok(&swept_plan, "choudoufu plan with every block removed");
    let swept = changes(&emptied.engine(&["show", "-json", "swept.plan"]).stdout);
    let swept: BTreeMap<&String, &Vec<String>> = swept.iter().map(|(a, (x, _))| (a, x)).collect();
    let every: BTreeMap<&String, &Vec<String>> = all.keys().map(|a| (a, &delete)).collect();
    assert_eq!(
        swept, every,
        "with every block removed the engine does not plan the destroy of exactly every instance:\n{}",
        text(&swept_plan)
    );

    // The engine's destroy leaves nothing of the estate.
    ok(
        &ours.engine(&["destroy", "-auto-approve"]),
        "choudoufu destroy",
    );
    // Objects the API keeps for a while after their deletion (a NAT
    // gateway, a prefix list) may still carry the marker; the engine's
    // next plan must find none of them live, and so create everything.
    ok(
        &ours.engine(&["plan", "-out", "gone.plan"]),
        "choudoufu plan",
    );
    let mine = changes(&ours.engine(&["show", "-json", "gone.plan"]).stdout);
    let found: Vec<&String> = all
        .keys()
        .filter(|a| {
            mine.get(*a).map(|(act, _)| act.as_slice()) != Some(&["create".to_string()][..])
        })
        .collect();
    assert!(
        found.is_empty(),
        "after its destroy the engine still finds {found:?}"
    );
    ok(
        &stock.run(&tf, &["plan", "-out=gone.plan", "-no-color"]),
        "terraform plan",
    );
    let gone = changes(&stock.run(&tf, &["show", "-json", "gone.plan"]).stdout);
    let recreated: BTreeSet<&String> = gone
        .iter()
        .filter(|(_, (a, _))| *a == ["create"])
        .map(|(k, _)| k)
        .collect();
    let missing: Vec<&String> = all.keys().filter(|a| !recreated.contains(a)).collect();
    assert_eq!(
        missing,
        drift.outlive.iter().collect::<Vec<_>>(),
        "after the engine's destroy stock still finds objects (drift.toml's outlive names those moto keeps)"
    );
    eprintln!(
        "{name}: {} instances round-tripped in {:?}",
        all.len(),
        started.elapsed()
    );
}

/// One test per root, so they run side by side.
macro_rules! round_trips {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                round_trip(stringify!($name));
            }
        )*

        #[test]
        fn every_catalogue_root_has_its_round_trip() {
            let tested: BTreeSet<&str> = [$(stringify!($name)),*].into();
            let roots: BTreeSet<String> = std::fs::read_dir(crate::catalogue::roots_dir())
                .unwrap()
                .flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            let roots: BTreeSet<&str> = roots.iter().map(String::as_str).collect();
            assert_eq!(roots, tested, "every root under tests/fixtures/catalogue has one test");
        }
    };
}

round_trips!(clusters, defaults, edge, network, services, storage);
