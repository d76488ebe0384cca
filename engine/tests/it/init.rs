//! `choudoufu init` and the dependency lock file against stock terraform
//! 1.11, the real aws provider from the pinned mirror, and a real moto:
//! the lock file both write for the same root, plans across the two tools
//! in one working directory, and the refusals before any provider starts.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::{aws_binary, aws_provider, cli_config, flat, terraform, text, Moto, Workdir};

const LOCK: &str = ".terraform.lock.hcl";

/// Copies a reference estate's root (its `.tf` files and `live.hcl`, as a
/// fresh clone holds them) into `to`, with the aws provider pointed at
/// `endpoint` by an override file.
fn estate_copy(estate: &str, to: &Path, endpoint: &str) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../estates")
        .join(estate);
    for entry in fs::read_dir(&from).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_file() && (name.ends_with(".tf") || name == "live.hcl") {
            fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
    fs::write(to.join("moto_override.tf"), aws_provider(endpoint)).unwrap();
}

fn engine_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_choudoufu"))
}

#[test]
fn init_each_reference_estate_then_plan_and_share_the_directory_with_terraform() {
    let moto = Moto::start();
    for estate in ["reference-aws-stateful", "reference-aws-platform"] {
        // The engine's copy and terraform's copy of the same root.
        let ours = Workdir::new();
        let theirs = Workdir::new();
        estate_copy(estate, ours.dir.path(), &moto.endpoint);
        estate_copy(estate, theirs.dir.path(), &moto.endpoint);

        let init = ours.engine(&["init", "-input=false"]);
        let out = text(&init);
        assert!(
            init.status.success(),
            "{estate}: choudoufu init failed:\n{out}"
        );
        for line in [
            "Initializing provider plugins...",
            "- Finding hashicorp/aws versions matching \"5.100.0\"...",
            "- Installing hashicorp/aws v5.100.0...",
            "- Installed hashicorp/aws v5.100.0 (unauthenticated)",
            "Terraform has created a lock file .terraform.lock.hcl",
        ] {
            assert!(out.contains(line), "{estate}: no {line:?} in:\n{out}");
        }
        let tf_init = theirs.run(&terraform(), &["init", "-input=false", "-no-color"]);
        assert!(tf_init.status.success(), "{}", text(&tf_init));
        let our_lock = fs::read(ours.dir.path().join(LOCK)).unwrap();
        let their_lock = fs::read(theirs.dir.path().join(LOCK)).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&our_lock),
            String::from_utf8_lossy(&their_lock),
            "{estate}: the lock files differ"
        );
        let link = |w: &Workdir| {
            fs::read_link(w.dir.path().join(
                ".terraform/providers/registry.terraform.io/hashicorp/aws/5.100.0/linux_amd64",
            ))
            .unwrap()
        };
        assert_eq!(link(&ours), link(&theirs), "{estate}: installed alike");

        // Each tool plans in the directory the other initialised; neither
        // touches the lock file.
        let plan = ours.engine(&["plan"]);
        assert!(
            plan.status.success() && text(&plan).contains("to add, 0 to change, 0 to destroy."),
            "{estate}: choudoufu plan after choudoufu init:\n{}",
            text(&plan)
        );
        let plan = theirs.engine(&["plan"]);
        assert!(
            plan.status.success() && text(&plan).contains("to add, 0 to change, 0 to destroy."),
            "{estate}: choudoufu plan after terraform init:\n{}",
            text(&plan)
        );
        let tf_plan = ours.run(
            &terraform(),
            &["plan", "-input=false", "-no-color", "-refresh=false"],
        );
        assert!(
            tf_plan.status.success(),
            "{estate}: terraform plan after choudoufu init:\n{}",
            text(&tf_plan)
        );
        assert_eq!(fs::read(ours.dir.path().join(LOCK)).unwrap(), our_lock);
        assert_eq!(fs::read(theirs.dir.path().join(LOCK)).unwrap(), their_lock);

        // A second init reuses what is there and leaves the file as it was.
        let again = ours.engine(&["init"]);
        let out = text(&again);
        assert!(again.status.success(), "{out}");
        assert!(
            out.contains(
                "- Reusing previous version of hashicorp/aws from the dependency lock file"
            ),
            "{out}"
        );
        assert!(
            out.contains("- Using previously-installed hashicorp/aws v5.100.0"),
            "{out}"
        );
        assert_eq!(fs::read(ours.dir.path().join(LOCK)).unwrap(), our_lock);
    }
}

/// Every process running the executable at `path`, from /proc.
fn running(path: &Path) -> Vec<u32> {
    let want = fs::canonicalize(path).unwrap();
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == want))
        .collect()
}

/// Runs `command` while watching, every 5 ms, for a process of `binary`;
/// returns the output and whether one was seen.
fn watching(binary: &Path, command: &mut std::process::Command) -> (std::process::Output, bool) {
    let seen = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (seen, done, binary) = (seen.clone(), done.clone(), binary.to_path_buf());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                if !running(&binary).is_empty() {
                    seen.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = command.output().unwrap();
    done.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    (out, seen.load(Ordering::SeqCst))
}

/// A private filesystem mirror holding a copy of the aws provider, so that
/// one byte of it can change.
fn private_mirror(dir: &Path) -> PathBuf {
    let pkg = dir.join("registry.terraform.io/hashicorp/aws/5.100.0/linux_amd64");
    fs::create_dir_all(&pkg).unwrap();
    let original = aws_binary();
    for entry in fs::read_dir(original.parent().unwrap()).unwrap().flatten() {
        fs::copy(entry.path(), pkg.join(entry.file_name())).unwrap();
    }
    pkg.join(original.file_name().unwrap())
}

#[test]
fn init_then_a_provider_changed_by_one_byte_is_refused_before_it_starts() {
    let w = Workdir::new();
    let mirror = w.home.path().join("mirror");
    let binary = private_mirror(&mirror);
    // The working directory's CLI configuration now names only that mirror.
    cli_config(w.home.path(), &mirror);
    let root = crate::support::aws_root(w.dir.path());
    let mut main = fs::read_to_string(root.join("main.tf")).unwrap();
    main.push_str(&aws_provider("http://127.0.0.1:1"));
    main.push_str("resource \"aws_sqs_queue\" \"q\" {\n  name = \"q\"\n}\n");
    fs::write(root.join("main.tf"), main).unwrap();
    crate::support::write_live(&root, "lockcheck");
    let init = w.engine(&["init"]);
    assert!(init.status.success(), "{}", text(&init));

    // Untouched, validate starts the provider (the watch sees it).
    let (out, seen) = watching(
        &binary,
        w.command(engine_bin()).args(["validate", "-no-color"]),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(seen, "the watch saw no provider process while validate ran");

    // One byte changed: refused with terraform's words, nothing started.
    let mut bytes = fs::read(&binary).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    fs::write(&binary, &bytes).unwrap();
    drop(bytes);
    let (out, seen) = watching(&binary, w.command(engine_bin()).args(["plan", "-no-color"]));
    let ours = flat(&text(&out));
    assert_eq!(out.status.code(), Some(1), "{ours}");
    assert!(!seen, "a provider process started: {ours}");
    assert!(
        !w.dir.path().join(".choudoufu").exists(),
        "the refused plan wrote records"
    );
    let tf = w.run(&terraform(), &["plan", "-input=false", "-no-color"]);
    let theirs = flat(&text(&tf));
    assert_eq!(tf.status.code(), Some(1), "{theirs}");
    for line in [
        "Error: Required plugins are not installed",
        "The installed provider plugins are not consistent with the packages selected in the dependency lock file:",
        "- registry.terraform.io/hashicorp/aws: the cached package for registry.terraform.io/hashicorp/aws 5.100.0 (in .terraform/providers) does not match any of the checksums recorded in the dependency lock file",
    ] {
        assert!(theirs.contains(line), "terraform: no {line:?} in {theirs}");
        assert!(ours.contains(line), "choudoufu: no {line:?} in {ours}");
    }
}

#[test]
fn init_bad_cases_are_refused_with_nothing_written() {
    // A constraint no mirror satisfies: nothing written at all.
    let w = Workdir::new();
    fs::write(
        w.dir.path().join("main.tf"),
        "terraform {\n  required_providers {\n    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"~> 6.0\"\n    }\n  }\n}\n",
    )
    .unwrap();
    crate::support::write_live(w.dir.path(), "bad");
    let before = listing(w.dir.path());
    let out = w.engine(&["init"]);
    let msg = flat(&text(&out));
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("Error: Failed to query available provider packages"),
        "{msg}"
    );
    assert!(msg.contains("Could not retrieve the list of available versions for provider hashicorp/aws: no available releases match the given constraints ~> 6.0"), "{msg}");
    assert_eq!(listing(w.dir.path()), before, "init wrote something");

    // A provider only the public registry could serve: the source and
    // every place looked are named.
    fs::write(
        w.dir.path().join("main.tf"),
        "terraform {\n  required_providers {\n    null = { source = \"hashicorp/null\" }\n  }\n}\n",
    )
    .unwrap();
    let out = w.engine(&["init"]);
    let msg = flat(&text(&out));
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(msg.contains("provider registry.terraform.io/hashicorp/null was not found in any of the search locations"), "{msg}");
    assert!(
        msg.contains(&format!("- {}", crate::support::plugin_mirror().display())),
        "{msg}"
    );
    assert_eq!(listing(w.dir.path()), before, "init wrote something");

    // The root initialised properly, then its lock file broken: file and
    // line named, and neither plan nor init writes anything.
    let w = Workdir::new();
    crate::support::aws_root(w.dir.path());
    crate::support::write_live(w.dir.path(), "bad");
    let init = w.engine(&["init"]);
    assert!(init.status.success(), "{}", text(&init));
    let good = fs::read_to_string(w.dir.path().join(LOCK)).unwrap();
    let broken = good.replacen("  ]\n", "  \n", 1);
    fs::write(w.dir.path().join(LOCK), &broken).unwrap();
    let before = listing(w.dir.path());
    for args in [&["plan"][..], &["init"], &["validate"]] {
        let out = w.engine(args);
        let msg = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {msg}");
        assert!(
            msg.contains("on .terraform.lock.hcl line"),
            "{args:?}: {msg}"
        );
        assert_eq!(listing(w.dir.path()), before, "{args:?} wrote something");
        assert_eq!(fs::read_to_string(w.dir.path().join(LOCK)).unwrap(), broken);
    }

    // A lock file naming a provider the root no longer requires (and so
    // never installed): plan refuses as terraform does.
    let stale = format!("{good}\nprovider \"registry.terraform.io/hashicorp/null\" {{\n  version = \"3.2.0\"\n  hashes = [\n    \"h1:ej0dK1Pxpz9hD37kCwMV+FITdmWpoZ0wVE+Snv2jFEY=\",\n  ]\n}}\n");
    fs::write(w.dir.path().join(LOCK), &stale).unwrap();
    let line = "- registry.terraform.io/hashicorp/null: there is no package for registry.terraform.io/hashicorp/null 3.2.0 cached in .terraform/providers";
    let out = w.engine(&["plan"]);
    let ours = flat(&text(&out));
    assert_eq!(out.status.code(), Some(1), "{ours}");
    assert!(
        ours.contains("Error: Required plugins are not installed") && ours.contains(line),
        "{ours}"
    );
    let tf = w.run(&terraform(), &["plan", "-input=false", "-no-color"]);
    assert!(flat(&text(&tf)).contains(line), "{}", text(&tf));
    assert_eq!(listing(w.dir.path()), before, "plan wrote something");
    assert_eq!(fs::read_to_string(w.dir.path().join(LOCK)).unwrap(), stale);
    // With -lockfile=readonly, init refuses to drop it.
    let out = w.engine(&["init", "-lockfile=readonly"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(flat(&text(&out)).contains("Error: Provider dependency changes detected"));
    assert_eq!(fs::read_to_string(w.dir.path().join(LOCK)).unwrap(), stale);

    // A read-only .terraform: init fails installing, and writes no lock.
    let w = Workdir::new();
    crate::support::aws_root(w.dir.path());
    crate::support::write_live(w.dir.path(), "bad");
    let dot = w.dir.path().join(".terraform");
    fs::create_dir(&dot).unwrap();
    let _guard = ReadOnly::new(&dot);
    let out = w.engine(&["init"]);
    let msg = flat(&text(&out));
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(msg.contains("Error: Failed to install provider"), "{msg}");
    assert!(
        msg.contains("failed to create parent directories leading to"),
        "{msg}"
    );
    assert!(!w.dir.path().join(LOCK).exists(), "a lock file was written");
}

/// Every path under `dir`, to show nothing was written.
#[test]
fn a_root_with_no_lock_file_is_refused_as_terraform_refuses_it() {
    // A root requiring the aws provider, never initialised: plan asks for
    // init, validate names the missing provider, in terraform's words and
    // with its exit code, and neither starts a provider or writes a thing.
    let w = Workdir::new();
    let root = crate::support::aws_root(w.dir.path());
    let mut main = fs::read_to_string(root.join("main.tf")).unwrap();
    main.push_str(&aws_provider("http://127.0.0.1:1"));
    main.push_str("resource \"aws_sqs_queue\" \"q\" {\n  name = \"q\"\n}\n");
    fs::write(root.join("main.tf"), main).unwrap();
    crate::support::write_live(&root, "nolock");
    let before = listing(&root);
    let expected: [(&str, &[&str]); 2] = [
        (
            "plan",
            &[
                "Error: Inconsistent dependency lock file",
                "- provider registry.terraform.io/hashicorp/aws: required by this configuration but no version is selected",
                "To make the initial dependency selections that will initialize the dependency lock file, run: TOOL init",
            ],
        ),
        (
            "validate",
            &[
                "Error: Missing required provider",
                "This configuration requires provider registry.terraform.io/hashicorp/aws, but that provider isn't available. You may be able to install it automatically by running: TOOL init",
            ],
        ),
    ];
    for (command, lines) in expected {
        let ours = w.engine(&[command]);
        let theirs = w.run(&terraform(), &[command, "-no-color"]);
        for (tool, out) in [("choudoufu", &ours), ("terraform", &theirs)] {
            let said = flat(&text(out));
            assert_eq!(out.status.code(), Some(1), "{tool} {command}: {said}");
            for line in lines {
                let line = line.replace("TOOL", tool);
                assert!(
                    said.contains(&line),
                    "{tool} {command}: no {line:?} in {said}"
                );
            }
        }
        assert_eq!(listing(&root), before, "{command} wrote something");
    }
    // The same verdict as JSON, byte for byte, fields in terraform's order.
    let ours = text(&w.engine(&["validate", "-json"]));
    let theirs = text(&w.run(&terraform(), &["validate", "-json", "-no-color"]));
    assert_eq!(ours.replace("choudoufu init", "terraform init"), theirs);

    // A root that requires no provider needs no lock file, for either.
    let bare = Workdir::new();
    fs::write(
        bare.dir.path().join("main.tf"),
        "output \"x\" {\n  value = 1\n}\n",
    )
    .unwrap();
    crate::support::write_live(bare.dir.path(), "nolock");
    let ours = bare.engine(&["plan"]);
    assert!(ours.status.success(), "{}", text(&ours));
    let theirs = bare.run(&terraform(), &["plan", "-input=false", "-no-color"]);
    assert!(theirs.status.success(), "{}", text(&theirs));
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Whether the tests run as root (the owner of this process's /proc entry).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A directory no one can write while this lives: mode 0555, and, for
/// root, whom modes do not stop, the immutable attribute.
struct ReadOnly(PathBuf);

impl ReadOnly {
    fn new(dir: &Path) -> ReadOnly {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).unwrap();
        if is_root() {
            let ok = std::process::Command::new("chattr")
                .arg("+i")
                .arg(dir)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chattr +i {} failed", dir.display());
        }
        ReadOnly(dir.to_path_buf())
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if is_root() {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
        }
        let _ = fs::set_permissions(&self.0, fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn a_backend_block_is_named_as_unused_at_init() {
    // A root keeping its state in s3, as most teams' roots do: init says,
    // quoting the block, that the live system takes the backend's place.
    let w = Workdir::new();
    let root = crate::support::aws_root(w.dir.path());
    let mut main = fs::read_to_string(root.join("main.tf")).unwrap();
    main.push_str(&aws_provider("http://127.0.0.1:1"));
    main.push_str(
        "terraform {\n  backend \"s3\" {\n    bucket = \"tfstate\"\n    key    = \"app.tfstate\"\n  }\n}\n",
    );
    fs::write(root.join("main.tf"), main).unwrap();
    crate::support::write_live(&root, "backend");
    let init = w.engine(&["init", "-input=false"]);
    let said = flat(&text(&init));
    assert!(init.status.success(), "{said}");
    for line in [
        "Warning: The live system is the state",
        "backend \"s3\" {",
        "choudoufu keeps no state, so the \"s3\" backend is neither read nor written",
    ] {
        assert!(said.contains(line), "no {line:?} in {said}");
    }
    // Without the block, no such word.
    let plain = Workdir::new();
    let root = crate::support::aws_root(plain.dir.path());
    crate::support::write_live(&root, "backend");
    let init = plain.engine(&["init", "-input=false"]);
    assert!(init.status.success(), "{}", text(&init));
    assert!(!text(&init).contains("The live system is the state"));
}
