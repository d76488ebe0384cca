//! Root outputs across plans and applies, against stock terraform: the
//! engine keeps what the last apply left in its record store, where stock
//! keeps it in its state file, and each plan's "Changes to Outputs" must
//! read the same. Each side has its own moto, so both roots are identical.

use crate::support::{aws_provider, record_parameter, terraform, text, write_live, Moto, Workdir};

const ESTATE: &str = "it-outputs";

/// The parameter and the output every version of the root keeps.
const BASE: &str = r#"
variable "greeting" {
  type    = string
  default = "hello"
}

resource "aws_ssm_parameter" "p" {
  name  = "/it/out/p"
  type  = "String"
  value = var.greeting
}

output "arn" {
  value = aws_ssm_parameter.p.arn
}
"#;

/// The first outputs: one unknown until apply, one sensitive, an object.
const OUTPUTS: &str = r#"
output "greeting" {
  value = var.greeting
}

output "secret" {
  value     = "s3cr3t"
  sensitive = true
}

output "shape" {
  value = { n = 1.5, l = ["a", "b"] }
}
"#;

/// The outputs after a change: one changed, one removed, one added, and
/// the parameter untouched.
const CHANGED: &str = r#"
output "greeting" {
  value = "${var.greeting}, world"
}

output "secret" {
  value     = "0ther"
  sensitive = true
}

output "extra" {
  value = [1, 2]
}
"#;

struct Side {
    moto: Moto,
    w: Workdir,
}

impl Side {
    fn new() -> Side {
        let moto = Moto::start();
        let w = Workdir::new();
        write_live(w.dir.path(), ESTATE);
        Side { moto, w }
    }

    fn write(&self, body: &str) {
        let main = format!("{}{BASE}{body}", aws_provider(&self.moto.endpoint));
        std::fs::write(self.w.dir.path().join("main.tf"), main).unwrap();
    }
}

/// Runs stock terraform (`stock` true) or the engine with `args`, giving
/// its exit code and what it printed.
fn run(side: &Side, stock: bool, args: &[&str]) -> (Option<i32>, String) {
    let out = if stock {
        let mut all = args.to_vec();
        all.extend(["-no-color", "-input=false"]);
        side.w.run(&terraform(), &all)
    } else {
        side.w.engine(args)
    };
    (out.status.code(), text(&out))
}

/// From the first line starting with `heading` to the end.
fn outputs_part<'a>(out: &'a str, heading: &str) -> &'a str {
    if out.starts_with(heading) {
        return out;
    }
    out.find(&format!("\n{heading}"))
        .map_or("", |i| &out[i + 1..])
}

/// Both sides run `args`: the same exit code and the same outputs part.
fn same(stock: &Side, ours: &Side, args: &[&str], heading: &str) -> (i32, String) {
    let (stock_code, stock_text) = run(stock, true, args);
    let (our_code, our_text) = run(ours, false, args);
    assert_eq!(
        our_code, stock_code,
        "{args:?}\nstock:\n{stock_text}\nours:\n{our_text}"
    );
    assert_eq!(
        outputs_part(&our_text, heading),
        outputs_part(&stock_text, heading),
        "{args:?}\nstock:\n{stock_text}\nours:\n{our_text}"
    );
    (our_code.unwrap(), our_text)
}

/// The outputs the live record store keeps, as the AWS CLI reads them.
fn kept_outputs(side: &Side) -> Option<String> {
    side.moto
        .parameter(&record_parameter(ESTATE, "root.outputs"))
}

#[test]
fn outputs_plan_and_apply_as_terraform_shows_them() {
    let (stock, ours) = (Side::new(), Side::new());
    for s in [&stock, &ours] {
        s.write(OUTPUTS);
    }
    let (code, init) = run(&stock, true, &["init"]);
    assert_eq!(code, Some(0), "{init}");
    ours.w.init();
    let plan = ["plan", "-detailed-exitcode"];
    let apply = ["apply", "-auto-approve"];

    // New outputs, one unknown until apply and one sensitive.
    let (code, out) = same(&stock, &ours, &plan, "Changes to Outputs:");
    assert_eq!(code, 2);
    assert!(out.contains("+ arn      = (known after apply)"), "{out}");
    assert!(out.contains("+ secret   = (sensitive value)"), "{out}");

    // Applied: the same outputs printed; the store keeps the secret only
    // as a digest; the next plan is empty.
    let (_, out) = same(&stock, &ours, &apply, "Outputs:");
    assert!(out.contains("secret = <sensitive>"), "{out}");
    let kept = kept_outputs(&ours).unwrap();
    assert!(
        kept.contains("\"greeting\"") && !kept.contains("s3cr3t"),
        "{kept}"
    );

    // `output` reads them back as `terraform output` reads its state, but
    // for a sensitive value, which is not kept.
    for args in [
        &["output"][..],
        &["output", "greeting"],
        &["output", "shape"],
        &["output", "-raw", "arn"],
        &["output", "-json", "shape"],
        &["output", "-raw", "shape"],
        &["output", "nope"],
    ] {
        let stock_out = stock.w.run(&terraform(), &[args, &["-no-color"]].concat());
        let our_out = ours.w.engine(args);
        assert_eq!(
            (our_out.status.code(), text(&our_out)),
            (stock_out.status.code(), text(&stock_out)),
            "{args:?}"
        );
    }
    let stock_json = stock.w.run(&terraform(), &["output", "-json"]);
    let mut stock_json: serde_json::Value = serde_json::from_slice(&stock_json.stdout).unwrap();
    stock_json["secret"]
        .as_object_mut()
        .unwrap()
        .remove("value");
    let our_json = ours.w.engine(&["output", "-json"]);
    let our_json: serde_json::Value = serde_json::from_slice(&our_json.stdout).unwrap();
    assert_eq!(our_json, stock_json);
    let (code, out) = run(&ours, false, &["output", "-raw", "secret"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("Error: Output \"secret\" is sensitive and not kept"),
        "{out}"
    );
    let (code, out) = same(&stock, &ours, &plan, "No changes.");
    assert_eq!(code, 0, "{out}");

    // A variable that changes the parameter and an output with it.
    let var = ["plan", "-detailed-exitcode", "-var", "greeting=bye"];
    let (code, out) = same(&stock, &ours, &var, "Changes to Outputs:");
    assert_eq!(code, 2);
    assert!(out.contains("~ greeting = \"hello\" -> \"bye\""), "{out}");

    // Only outputs change: nothing in the live system, still exit 2, and
    // terraform's note that applying only saves the outputs.
    for s in [&stock, &ours] {
        s.write(CHANGED);
    }
    let (code, out) = same(&stock, &ours, &plan, "Changes to Outputs:");
    assert_eq!(code, 2);
    assert!(!out.contains(" will be "), "{out}");
    assert!(out.contains("- shape    = {"), "{out}");
    assert!(out.contains("~ secret   = (sensitive value)"), "{out}");
    assert!(
        out.contains("You can apply this plan to save these new output values"),
        "{out}"
    );
    let (_, out) = same(&stock, &ours, &apply, "Outputs:");
    assert!(
        out.contains("Apply complete! Resources: 0 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    let (code, out) = same(&stock, &ours, &plan, "No changes.");
    assert_eq!(code, 0, "{out}");

    // Without the record store the outputs are new again, and nothing in
    // the live system is proposed.
    let (code, out) = run(&ours, false, &["plan", "-detailed-exitcode", "-no-records"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(!out.contains(" will be "), "{out}");
    for name in ["+ arn", "+ extra", "+ greeting", "+ secret"] {
        assert!(out.contains(name), "{name}: {out}");
    }

    // A destroy plan removes every output; the destroy leaves none kept.
    let destroy = ["plan", "-destroy", "-detailed-exitcode"];
    let (code, out) = same(&stock, &ours, &destroy, "Changes to Outputs:");
    assert_eq!(code, 2);
    assert!(
        out.contains("- greeting = \"hello, world\" -> null"),
        "{out}"
    );
    let (code, out) = run(&ours, false, &["destroy", "-auto-approve"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(kept_outputs(&ours), None);
}
