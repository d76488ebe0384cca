//! Module sources as users write them: a root calling a module from a git
//! repository by tag, installed by stock terraform's `init`, planned by the
//! engine from the directory terraform prepared; `choudoufu init` keeps
//! terraform's module manifest byte for byte, installs the same module in
//! a fresh clone of the root as terraform would, and a source changed after
//! the install is refused on terraform's words until `init` runs again.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::{aws_provider, flat, terraform, text, write_live, Moto, Workdir};

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
