//! Module sources as users write them: a root calling a module from a git
//! repository by tag, installed by stock terraform's `init`, planned by the
//! engine from the directory terraform prepared; `choudoufu init` keeps
//! terraform's module manifest byte for byte, installs the same module in
//! a fresh clone of the root as terraform would, and a source changed after
//! the install is refused on terraform's words until `init` runs again.
//! Then a registry module, an HTTP archive and a git module together,
//! served on loopback (`tests/fixtures/module_registry.py` speaks the
//! registry protocol) and reached by both tools through a CLI
//! configuration's `host` block: each tool's `init` installs the same tree
//! and manifest, and each validates what the other installed.

use std::fs;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::support::{
    aws_provider, flat, plugin_mirror, terraform, text, write_live, Moto, Workdir,
};

const ESTATE: &str = "it-module-sources";

/// `git` with `args` in `dir`, as a fixed author.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=it", "-c", "user.email=it@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out));
}

/// A repository holding a module of one parameter at its top and, as the
/// published security-group modules do, a wrapper under `modules/` calling
/// it by `../../`; tagged `v1.0.0`.
fn repository(dir: &Path) {
    fs::write(
        dir.join("main.tf"),
        "variable \"name\" {\n  type = string\n}\n\nresource \"aws_ssm_parameter\" \"p\" {\n  name  = \"/it/module-sources/${var.name}\"\n  type  = \"String\"\n  value = var.name\n}\n\noutput \"arn\" {\n  value = aws_ssm_parameter.p.arn\n}\n",
    )
    .unwrap();
    fs::create_dir_all(dir.join("modules/named")).unwrap();
    fs::write(
        dir.join("modules/named/main.tf"),
        "variable \"name\" {\n  type = string\n}\n\nmodule \"inner\" {\n  source = \"../../\"\n  name   = \"named-${var.name}\"\n}\n\noutput \"arn\" {\n  value = module.inner.arn\n}\n",
    )
    .unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "a module"]);
    git(dir, &["tag", "v1.0.0"]);
}

fn root(dir: &Path, moto: &Moto, source: &str) {
    fs::write(
        dir.join("main.tf"),
        format!(
            "{}\nmodule \"web\" {{\n  source = \"{source}\"\n  name   = \"web\"\n}}\n",
            aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    write_live(dir, ESTATE);
}

#[test]
fn a_git_module_terraform_installed_plans_with_the_engine() {
    let moto = Moto::start();
    let repo = tempfile::tempdir().unwrap();
    repository(repo.path());
    let source = |tag: &str| {
        format!(
            "git::file://{}//modules/named?ref={tag}",
            repo.path().display()
        )
    };
    let w = Workdir::new();
    root(w.dir.path(), &moto, &source("v1.0.0"));

    let tf = terraform();
    let init = w.run(&tf, &["init", "-input=false", "-no-color"]);
    assert!(init.status.success(), "terraform init: {}", text(&init));
    let manifest = w.dir.path().join(".terraform/modules/modules.json");
    let written = fs::read(&manifest).unwrap();
    let apply = w.run(
        &tf,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
    );
    assert!(apply.status.success(), "terraform apply: {}", text(&apply));

    // choudoufu init keeps what terraform installed, byte for byte.
    let init = w.engine(&["init", "-input=false"]);
    let said = text(&init);
    assert!(init.status.success(), "choudoufu init: {said}");
    assert!(
        said.contains("- web in .terraform/modules/web/modules/named")
            && said.contains("- web.inner in .terraform/modules/web"),
        "{said}"
    );
    assert_eq!(
        String::from_utf8_lossy(&fs::read(&manifest).unwrap()),
        String::from_utf8_lossy(&written)
    );

    // Migrated, the state set aside, the engine plans nothing.
    let migrate = w.engine(&["migrate", "-state", "terraform.tfstate"]);
    assert!(migrate.status.success(), "{}", text(&migrate));
    fs::rename(
        w.dir.path().join("terraform.tfstate"),
        w.dir.path().join("terraform.tfstate.migrated"),
    )
    .unwrap();
    let plan = w.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    assert_eq!(
        moto.parameter("/it/module-sources/named-web").as_deref(),
        Some("named-web")
    );

    // A fresh clone of the root: choudoufu init clones the module itself,
    // writing the manifest terraform wrote; the plan is empty there too,
    // and terraform validates the directory choudoufu prepared.
    let fresh = Workdir::new();
    root(fresh.dir.path(), &moto, &source("v1.0.0"));
    fs::copy(
        w.dir.path().join(".terraform.lock.hcl"),
        fresh.dir.path().join(".terraform.lock.hcl"),
    )
    .unwrap();
    let init = fresh.engine(&["init", "-input=false"]);
    let said = text(&init);
    assert!(init.status.success(), "choudoufu init: {said}");
    assert!(
        said.contains(&format!(
            "Downloading git::file://{}?ref=v1.0.0 for web...",
            repo.path().display()
        )),
        "{said}"
    );
    assert_eq!(
        String::from_utf8_lossy(
            &fs::read(fresh.dir.path().join(".terraform/modules/modules.json")).unwrap()
        ),
        String::from_utf8_lossy(&written)
    );
    let plan = fresh.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    let validate = fresh.run(&tf, &["validate", "-no-color"]);
    assert!(validate.status.success(), "{}", text(&validate));

    // A new tag in the source, no init: refused on the source's line.
    git(repo.path(), &["tag", "v1.0.1"]);
    root(w.dir.path(), &moto, &source("v1.0.1"));
    let plan = w.engine(&["plan"]);
    let said = flat(&text(&plan));
    assert_eq!(plan.status.code(), Some(1), "{said}");
    assert!(
        said.contains("Error: Module source has changed")
            && said.contains("in module \"web\":")
            && said.contains(
                "The source address was changed since this module was installed. Run \"terraform init\" to install all modules required by this configuration."
            ),
        "{said}"
    );

    // init takes the new tag; the plan is empty again.
    let init = w.engine(&["init", "-input=false"]);
    assert!(init.status.success(), "{}", text(&init));
    let plan = w.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
}

/// The fixture registry on a free loopback port, serving `root`; stopped
/// when dropped.
struct Registry {
    child: Child,
    port: u16,
}

impl Registry {
    fn start(root: &Path) -> Registry {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/module_registry.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(root)
            .arg(port.to_string())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the registry did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Registry { child, port }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A module of one output saying `word`, packed by `pack` (`tar -czf`, or
/// python's zipfile) into `archive`.
fn packed(archive: &Path, word: &str) {
    let src = tempfile::tempdir().unwrap();
    fs::write(
        src.path().join("main.tf"),
        format!("variable \"name\" {{\n  type = string\n}}\n\noutput \"said\" {{\n  value = \"{word} ${{var.name}}\"\n}}\n"),
    )
    .unwrap();
    fs::create_dir_all(archive.parent().unwrap()).unwrap();
    let name = archive.to_string_lossy();
    let out = if name.ends_with(".zip") {
        Command::new("python3")
            .args(["-m", "zipfile", "-c", &name, "main.tf"])
            .current_dir(src.path())
            .output()
            .unwrap()
    } else {
        Command::new("tar")
            .args(["-czf", &name, "main.tf"])
            .current_dir(src.path())
            .output()
            .unwrap()
    };
    assert!(out.status.success(), "packing {name}: {}", text(&out));
}

/// Every file under `dir` but git's own, with its content.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn registry_archive_and_git_modules_install_alike_with_either_tool() {
    let served = tempfile::tempdir().unwrap();
    for (v, word) in [("1.0.0", "hello"), ("1.1.0", "hi"), ("2.0.0", "hey")] {
        packed(
            &served
                .path()
                .join(format!("modules/acme/net/aws/{v}.tar.gz")),
            word,
        );
    }
    packed(&served.path().join("archives/greeting.zip"), "greetings");
    let registry = Registry::start(served.path());
    let repo = tempfile::tempdir().unwrap();
    repository(repo.path());

    let root = |dir: &Path, net_version: &str| {
        fs::write(
            dir.join("main.tf"),
            format!(
                r#"module "net" {{
  source  = "registry.gauntlet.test/acme/net/aws"
  version = "{net_version}"
  name    = "net"
}}

module "zipped" {{
  source = "http://127.0.0.1:{port}/archives/greeting.zip"
  name   = "zipped"
}}

module "tagged" {{
  source = "git::file://{repo}//modules/named?ref=v1.0.0"
  name   = "tagged"
}}
"#,
                port = registry.port,
                repo = repo.path().display()
            ),
        )
        .unwrap();
    };
    let tfrc = |w: &Workdir| {
        fs::write(
            &w.tfrc,
            format!(
                "provider_installation {{\n  filesystem_mirror {{\n    path = \"{}\"\n  }}\n}}\n\nhost \"registry.gauntlet.test\" {{\n  services = {{\n    \"modules.v1\" = \"http://127.0.0.1:{}/v1/modules/\"\n  }}\n}}\n",
                plugin_mirror().display(),
                registry.port
            ),
        )
        .unwrap();
    };
    let (theirs, ours) = (Workdir::new(), Workdir::new());
    for w in [&theirs, &ours] {
        root(w.dir.path(), "~> 1.0");
        write_live(w.dir.path(), "it-module-registry");
        tfrc(w);
    }
    let tf = terraform();
    let init = theirs.run(&tf, &["init", "-input=false", "-no-color"]);
    assert!(init.status.success(), "terraform init: {}", text(&init));
    let init = ours.engine(&["init", "-input=false"]);
    let said = text(&init);
    assert!(init.status.success(), "choudoufu init: {said}");
    for line in [
        "Downloading registry.gauntlet.test/acme/net/aws 1.1.0 for net...".to_owned(),
        format!(
            "Downloading http://127.0.0.1:{}/archives/greeting.zip for zipped...",
            registry.port
        ),
        "- tagged.inner in .terraform/modules/tagged".to_owned(),
    ] {
        assert!(said.contains(&line), "{line:?} not in:\n{said}");
    }
    let modules = |w: &Workdir| w.dir.path().join(".terraform/modules");
    assert_eq!(
        String::from_utf8_lossy(&fs::read(modules(&ours).join("modules.json")).unwrap()),
        String::from_utf8_lossy(&fs::read(modules(&theirs).join("modules.json")).unwrap())
    );
    assert_eq!(tree(&modules(&ours)), tree(&modules(&theirs)));

    // Each tool validates what the other installed.
    let v = ours.run(&tf, &["validate", "-no-color"]);
    assert!(v.status.success(), "terraform validate: {}", text(&v));
    let v = theirs.engine(&["validate"]);
    assert!(v.status.success(), "choudoufu validate: {}", text(&v));

    // No release allows the constraint: refused, naming the call.
    root(ours.dir.path(), "~> 9.0");
    let init = ours.engine(&["init", "-input=false"]);
    let said = flat(&text(&init));
    assert_eq!(init.status.code(), Some(1), "{said}");
    assert!(
        said.contains("Error: Unresolvable module version constraint")
            && said.contains("There is no available version of module \"registry.gauntlet.test/acme/net/aws\" (main.tf:1) which matches the given version constraint. The newest available version is 2.0.0."),
        "{said}"
    );
    // terraform says the same.
    root(theirs.dir.path(), "~> 9.0");
    let stock = theirs.run(&tf, &["init", "-input=false", "-no-color"]);
    let stock_said = flat(&text(&stock));
    assert_eq!(stock.status.code(), Some(1), "{stock_said}");
    assert!(
        stock_said.contains("There is no available version of module \"registry.gauntlet.test/acme/net/aws\" (main.tf:1) which matches the given version constraint. The newest available version is 2.0.0."),
        "{stock_said}"
    );
}

/// Sources that cannot be installed, each refused by both tools with exit
/// 1 under the same summary ("Failed to download module", "Error
/// accessing remote module registry", "Module not found"), naming the
/// call; the engine leaves no package folder, no manifest entry and no
/// lock file behind. A missing tag, an archive answering 404, an archive
/// that is no archive, a registry that is down, a module the registry does
/// not hold, and a getter the engine does not have.
#[test]
fn bad_module_sources_are_refused_naming_the_call_with_nothing_half_written() {
    let served = tempfile::tempdir().unwrap();
    fs::create_dir_all(served.path().join("archives")).unwrap();
    fs::write(
        served.path().join("archives/broken.zip"),
        b"not a zip at all",
    )
    .unwrap();
    let registry = Registry::start(served.path());
    let repo = tempfile::tempdir().unwrap();
    repository(repo.path());
    // A port nothing listens on: bound, then let go.
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cases = [
        (
            "a missing tag",
            format!("git::file://{}?ref=v9.9.9", repo.path().display()),
            "Failed to download module",
        ),
        (
            "an archive answering 404",
            format!("http://127.0.0.1:{}/archives/missing.zip", registry.port),
            "Failed to download module",
        ),
        (
            "an archive that is no archive",
            format!("http://127.0.0.1:{}/archives/broken.zip", registry.port),
            "Failed to download module",
        ),
        (
            "a registry that is down",
            "registry.down.test/acme/net/aws".to_owned(),
            "Error accessing remote module registry",
        ),
        (
            "a module the registry does not hold",
            "registry.gauntlet.test/acme/none/aws".to_owned(),
            "Module not found",
        ),
    ];
    let tf = terraform();
    for (what, source, summary) in &cases {
        let (theirs, ours) = (Workdir::new(), Workdir::new());
        for w in [&theirs, &ours] {
            fs::write(
                w.dir.path().join("main.tf"),
                format!("module \"web\" {{\n  source = \"{source}\"\n  name   = \"web\"\n}}\n"),
            )
            .unwrap();
            write_live(w.dir.path(), ESTATE);
            fs::write(
                &w.tfrc,
                format!(
                    "provider_installation {{\n  filesystem_mirror {{\n    path = \"{}\"\n  }}\n}}\n\nhost \"registry.down.test\" {{\n  services = {{\n    \"modules.v1\" = \"http://127.0.0.1:{down}/v1/modules/\"\n  }}\n}}\n\nhost \"registry.gauntlet.test\" {{\n  services = {{\n    \"modules.v1\" = \"http://127.0.0.1:{}/v1/modules/\"\n  }}\n}}\n",
                    plugin_mirror().display(),
                    registry.port
                ),
            )
            .unwrap();
        }
        let stock = theirs.run(&tf, &["init", "-input=false", "-no-color"]);
        let stock_said = flat(&text(&stock));
        assert_eq!(
            stock.status.code(),
            Some(1),
            "{what}: terraform init: {stock_said}"
        );
        assert!(
            stock_said.contains(summary),
            "{what}: terraform: {stock_said}"
        );
        let init = ours.engine(&["init", "-input=false"]);
        let said = flat(&text(&init));
        assert_eq!(
            init.status.code(),
            Some(1),
            "{what}: choudoufu init: {said}"
        );
        assert!(
            said.contains(&format!("Error: {summary}"))
                && (said.contains("module \"web\" (main.tf:1)")
                    || said.contains("Module \"web\" (from main.tf:1)")),
            "{what}: choudoufu init does not name the call as terraform does: {said}"
        );
        let modules = ours.dir.path().join(".terraform/modules");
        assert!(
            !modules.join("web").exists(),
            "{what}: a package folder was left behind"
        );
        let manifest = fs::read_to_string(modules.join("modules.json")).unwrap_or_default();
        assert!(
            !manifest.contains("\"Key\":\"web\""),
            "{what}: the manifest records the failed call: {manifest}"
        );
        assert!(
            !ours.dir.path().join(".terraform.lock.hcl").exists(),
            "{what}: a lock file was written after a failed init"
        );
    }

    // A getter neither tool has on this machine: refused by name, at once.
    let ours = Workdir::new();
    fs::write(
        ours.dir.path().join("main.tf"),
        "module \"web\" {\n  source = \"s3::https://s3.amazonaws.com/bucket/web.zip\"\n}\n",
    )
    .unwrap();
    write_live(ours.dir.path(), ESTATE);
    let init = ours.engine(&["init", "-input=false"]);
    let said = flat(&text(&init));
    assert_eq!(init.status.code(), Some(1), "{said}");
    assert!(
        said.contains("module \"web\"") && said.contains("s3::"),
        "the s3 getter's refusal does not name the call and the source: {said}"
    );
    assert!(!ours.dir.path().join(".terraform/modules/web").exists());
}
