//! The independent witness: the AWS CLI pointed at one twin.
//!
//! Nothing here asks terraform or the engine; every fact comes from the AWS
//! API as the emulator serves it. An [`Inventory`] is the set of live objects
//! of the kinds an estate declares, each named by the same identity the
//! [`Kind`] table derives from a terraform state instance, so live objects and
//! state instances compare as sets.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::thread;

use serde_json::Value;

use crate::awscli::{Cli, CliError};
use crate::clock::Clock;
use crate::oracle::StateInstance;
use crate::process;
use crate::substrate::Side;

pub mod reads;
mod tamper;

pub use tamper::Handle;

use reads::Read;

/// How many objects `Witness::describe` reads side by side.
const DESCRIBE_AT_ONCE: usize = 4;

/// The tag keys that mark an object as an estate's.
pub const MARKER_KEYS: [&str; 2] = ["tofu-estate", "tofu-address"];

/// Where the engine keeps its own SSM parameters: every estate's lock
/// (`/choudoufu/lock/<estate>`) and record store
/// (`/choudoufu/records/<estate>/...`). Like terraform's state backend they
/// are not part of an estate's inventory: the estate twin holds them and
/// the oracle twin never does.
pub const ENGINE_PARAMETERS: &str = "/choudoufu/";

/// Whether a parameter is the engine's own (see [`ENGINE_PARAMETERS`]).
pub fn engine_parameter(name: &str) -> bool {
    name.starts_with(ENGINE_PARAMETERS)
}

/// The parameters an `ssm describe-parameters` answer lists, by name, less
/// the engine's own.
fn listed_parameters(v: &Value) -> Vec<String> {
    strings(&v["Parameters"], Some("Name"))
        .into_iter()
        .filter(|n| !engine_parameter(n))
        .collect()
}

#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error("the AWS CLI on the {side} failed: aws {args}:\n{stderr}")]
    Call {
        side: Side,
        args: String,
        stderr: String,
    },
    #[error(
        "the AWS CLI on the {side} printed what the witness cannot read (aws {args}): {reason}"
    )]
    Unreadable {
        side: Side,
        args: String,
        reason: String,
    },
    #[error("{address}: the state lacks {attr}, which names it to the witness")]
    NoIdentity { address: String, attr: &'static str },
    #[error("the AWS CLI on the {side}: {reason}")]
    Cli { side: Side, reason: String },
    #[error(transparent)]
    Process(#[from] process::ProcessError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A kind of live object the witness can list: one per terraform type it
/// knows how to read, one per type `reads.toml` says how to list
/// ([`Kind::Listed`]), and [`Kind::Tagged`] for every other type, read by
/// ARN through the tagging API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Bucket,
    BucketVersioning,
    BucketPolicy,
    Queue,
    QueuePolicy,
    QueueRedrivePolicy,
    Topic,
    Subscription,
    Role,
    Policy,
    RolePolicyAttachment,
    RolePolicy,
    Table,
    Parameter,
    /// An object of a type `reads.toml` lists.
    Listed(&'static Read),
    /// An object of any other type, named by its ARN: its state instance
    /// has an `arn` and a `tags_all`; live, the tagging API lists it while
    /// it carries a tag.
    Tagged,
}

impl Kind {
    const ALL: [Kind; 14] = [
        Kind::Bucket,
        Kind::BucketVersioning,
        Kind::BucketPolicy,
        Kind::Queue,
        Kind::QueuePolicy,
        Kind::QueueRedrivePolicy,
        Kind::Topic,
        Kind::Subscription,
        Kind::Role,
        Kind::Policy,
        Kind::RolePolicyAttachment,
        Kind::RolePolicy,
        Kind::Table,
        Kind::Parameter,
    ];

    /// The terraform resource type this kind witnesses.
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::Bucket => "aws_s3_bucket",
            Kind::BucketVersioning => "aws_s3_bucket_versioning",
            Kind::BucketPolicy => "aws_s3_bucket_policy",
            Kind::Queue => "aws_sqs_queue",
            Kind::QueuePolicy => "aws_sqs_queue_policy",
            Kind::QueueRedrivePolicy => "aws_sqs_queue_redrive_policy",
            Kind::Topic => "aws_sns_topic",
            Kind::Subscription => "aws_sns_topic_subscription",
            Kind::Role => "aws_iam_role",
            Kind::Policy => "aws_iam_policy",
            Kind::RolePolicyAttachment => "aws_iam_role_policy_attachment",
            Kind::RolePolicy => "aws_iam_role_policy",
            Kind::Table => "aws_dynamodb_table",
            Kind::Parameter => "aws_ssm_parameter",
            Kind::Listed(r) => &r.type_name,
            Kind::Tagged => "any other type",
        }
    }

    /// The kind that witnesses a type: its own row, else its read in
    /// `reads.toml`, else [`Kind::Tagged`].
    pub fn for_type(type_name: &str) -> Kind {
        Kind::ALL
            .into_iter()
            .find(|k| k.type_name() == type_name)
            .or_else(|| reads::of_type(type_name).map(Kind::Listed))
            .unwrap_or(Kind::Tagged)
    }

    /// The identity of a state instance of this kind, as the witness names
    /// the live object.
    pub fn identity(self, inst: &StateInstance) -> Result<String, WitnessError> {
        let v = &inst.values;
        let attr = |name: &'static str| {
            v[name]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| WitnessError::NoIdentity {
                    address: inst.addr.to_string(),
                    attr: name,
                })
        };
        match self {
            Kind::Bucket | Kind::BucketVersioning | Kind::BucketPolicy => attr("bucket"),
            Kind::Queue | Kind::Topic | Kind::Role | Kind::Policy | Kind::Table => attr("name"),
            Kind::Parameter => attr("name"),
            Kind::QueuePolicy | Kind::QueueRedrivePolicy => {
                Ok(last_segment(&attr("queue_url")?, '/'))
            }
            Kind::Subscription => attr("arn"),
            Kind::RolePolicyAttachment => Ok(format!("{}/{}", attr("role")?, attr("policy_arn")?)),
            Kind::RolePolicy => Ok(format!("{}/{}", attr("role")?, attr("name")?)),
            Kind::Listed(r) => attr(&r.identity),
            Kind::Tagged => attr("arn"),
        }
    }

    /// Whether the engine stamps its marker on a state instance of this
    /// kind: a kind with its own row when [`Kind::tagged`]; an object of
    /// any other type when it is taggable (its values hold `tags_all`).
    pub fn stamped(self, inst: &StateInstance) -> bool {
        match self {
            Kind::Tagged => inst.values.get("tags_all").is_some(),
            k => k.tagged(),
        }
    }

    /// Whether the witness can name a state instance of this kind: always
    /// for a kind with its own row; for [`Kind::Tagged`], when the instance
    /// is taggable (its values hold `tags_all`) and has an ARN.
    pub fn names(self, inst: &StateInstance) -> bool {
        self != Kind::Tagged
            || (inst.values.get("tags_all").is_some()
                && inst.values["arn"].as_str().is_some_and(|a| !a.is_empty()))
    }

    /// Whether objects of this kind carry tags, so the estate's marker.
    /// The others (a bucket's versioning and policy, a queue's policies, a
    /// subscription, an attachment, a role's inline policy) are owned
    /// through their parent.
    pub fn tagged(self) -> bool {
        if let Kind::Listed(r) = self {
            return r.tagged;
        }
        matches!(
            self,
            Kind::Bucket
                | Kind::Queue
                | Kind::Topic
                | Kind::Role
                | Kind::Policy
                | Kind::Table
                | Kind::Parameter
                | Kind::Tagged
        )
    }

    /// The object an ARN from the tagging API names, as the witness names it.
    pub fn of_arn(arn: &str) -> Option<(Kind, String)> {
        let parts: Vec<&str> = arn.splitn(6, ':').collect();
        let [_, _, service, _, _, resource] = parts[..] else {
            return None;
        };
        if let Some(r) = reads::of_arn_class(&arn_class(arn)) {
            let id = resource.rsplit(['/', ':']).next().unwrap_or(resource);
            return Some((Kind::Listed(r), id.to_owned()));
        }
        match service {
            "s3" => Some((Kind::Bucket, resource.to_owned())),
            "sqs" => Some((Kind::Queue, resource.to_owned())),
            "sns" if !resource.contains(':') => Some((Kind::Topic, resource.to_owned())),
            "sns" => Some((Kind::Subscription, arn.to_owned())),
            "dynamodb" => Some((Kind::Table, resource.strip_prefix("table/")?.to_owned())),
            "ssm" => {
                let name = resource.strip_prefix("parameter")?;
                Some((Kind::Parameter, name.to_owned()))
            }
            "iam" => match resource.split_once('/') {
                Some(("policy", name)) => Some((Kind::Policy, last_segment(name, '/'))),
                Some(("role", name)) => Some((Kind::Role, last_segment(name, '/'))),
                _ => Some((Kind::Tagged, arn.to_owned())),
            },
            _ => Some((Kind::Tagged, arn.to_owned())),
        }
    }

    /// The short name used in counts on the page.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Tagged => "object by ARN",
            k => k.type_name().trim_start_matches("aws_"),
        }
    }
}

/// Whether a state instance is an object by ARN carrying no tag: the
/// tagging API lists it only once something tags it (the engine's marker).
pub fn untagged_by_arn(inst: &StateInstance) -> bool {
    Kind::for_type(&inst.type_name) == Kind::Tagged
        && inst.values["tags_all"]
            .as_object()
            .is_none_or(|m| m.is_empty())
}

/// The class of object an ARN names, `service:resource-type` (`ec2:vpc`,
/// `logs:log-group`), or the service alone when its resource has no type
/// (`sqs`). The witness says per class whether the tagging API lists it.
pub fn arn_class(arn: &str) -> String {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [_, _, service, _, _, resource] = parts[..] else {
        return arn.to_owned();
    };
    match resource.find(['/', ':']) {
        Some(i) => format!("{service}:{}", &resource[..i]),
        None => service.to_owned(),
    }
}

fn last_segment(s: &str, sep: char) -> String {
    s.rsplit(sep).next().unwrap_or(s).to_owned()
}

/// Live objects by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inventory(pub BTreeMap<Kind, BTreeSet<String>>);

impl Inventory {
    /// The identities of a terraform state's instances the witness can
    /// name (see [`Kind::names`]).
    pub fn of_state(state: &[StateInstance]) -> Result<Inventory, WitnessError> {
        let mut inv = Inventory::default();
        for i in state {
            let k = Kind::for_type(&i.type_name);
            if k.names(i) {
                inv.insert(k, k.identity(i)?);
            }
        }
        Ok(inv)
    }

    /// What the tagging API lists of a state before anything stamped a
    /// marker: [`Inventory::of_state`] less the objects of other types that
    /// carry no tag.
    pub fn of_state_tagged(state: &[StateInstance]) -> Result<Inventory, WitnessError> {
        let untagged: Vec<&StateInstance> = state.iter().filter(|i| untagged_by_arn(i)).collect();
        let mut inv = Inventory::of_state(state)?;
        if let Some(arns) = inv.0.get_mut(&Kind::Tagged) {
            for i in untagged {
                if let Some(arn) = i.values["arn"].as_str() {
                    arns.remove(arn);
                }
            }
        }
        Ok(inv)
    }

    /// `self` less the objects by ARN of classes `live` holds none of:
    /// the emulator's tagging API does not list them, so the witness cannot
    /// say whether they are there. The classes are returned beside.
    pub fn listed_in(&self, live: &Inventory) -> (Inventory, BTreeSet<String>) {
        let listed: BTreeSet<String> = live
            .0
            .get(&Kind::Tagged)
            .into_iter()
            .flatten()
            .map(|a| arn_class(a))
            .collect();
        let mut out = self.clone();
        let mut unlisted = BTreeSet::new();
        if let Some(arns) = out.0.get_mut(&Kind::Tagged) {
            arns.retain(|a| {
                let class = arn_class(a);
                let keep = listed.contains(&class);
                if !keep {
                    unlisted.insert(class);
                }
                keep
            });
        }
        (out, unlisted)
    }

    pub fn insert(&mut self, k: Kind, id: String) {
        self.0.entry(k).or_default().insert(id);
    }

    pub fn len(&self) -> usize {
        self.0.values().map(BTreeSet::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, k: Kind, id: &str) -> bool {
        self.0.get(&k).is_some_and(|s| s.contains(id))
    }

    /// Objects in `self` and not in `other`.
    pub fn minus(&self, other: &Inventory) -> Inventory {
        let mut out = Inventory::default();
        for (k, ids) in &self.0 {
            for id in ids {
                if !other.contains(*k, id) {
                    out.insert(*k, id.clone());
                }
            }
        }
        out
    }

    /// Objects in both.
    pub fn intersect(&self, other: &Inventory) -> Inventory {
        let mut out = Inventory::default();
        for (k, ids) in &self.0 {
            for id in ids.iter().filter(|id| other.contains(*k, id)) {
                out.insert(*k, id.clone());
            }
        }
        out
    }

    /// The objects counted by what they are: a kind with its own row by
    /// its noun, an object by ARN by its ARN's class.
    fn by_noun(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for (k, ids) in &self.0 {
            for id in ids {
                let noun = match k {
                    Kind::Tagged => arn_class(id),
                    k => k.noun().to_owned(),
                };
                *out.entry(noun).or_default() += 1;
            }
        }
        out
    }

    /// `3 sqs_queue, 1 s3_bucket, 2 ec2:subnet, ...`: counts by kind (an
    /// object by ARN by its class), for the page.
    pub fn counts(&self) -> String {
        let parts: Vec<String> = self
            .by_noun()
            .into_iter()
            .map(|(noun, n)| format!("{n} {noun}"))
            .collect();
        if parts.is_empty() {
            "nothing".into()
        } else {
            parts.join(", ")
        }
    }

    /// Every object, as `kind id` (an object by ARN as its ARN), for
    /// details that name them.
    pub fn names(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .flat_map(|(k, ids)| {
                ids.iter().map(move |id| match k {
                    Kind::Tagged => id.clone(),
                    k => format!("{} {id}", k.noun()),
                })
            })
            .collect();
        parts.join(", ")
    }

    /// Kinds that hold at least one object, each ARN class of the objects
    /// by ARN counted as one.
    pub fn kinds(&self) -> usize {
        self.by_noun().len()
    }
}

/// One record of an estate's record store in the live system, as the
/// witness reads it back: the record, decoded as the engine decodes it
/// (`engine::record::ssm::Snapshot`), and the SSM parameters that hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    pub record: engine::record::Record,
    /// The parameters holding it, full name and value: its head
    /// (`/choudoufu/records/<estate>/<key>`) first, then the head's parts
    /// (`<head>-<gen>-<i>`, a value over 4000 bytes), in name order.
    pub parameters: Vec<(String, String)>,
}

impl StoredRecord {
    pub fn address(&self) -> &str {
        &self.record.address
    }
}

/// The records an estate's store holds, from its parameters (full name to
/// value) under `path`: those that read back whole, by address, each with
/// its head and every part of that head's name, current or left by a
/// crashed write (the engine ignores the latter; taking them with the head
/// leaves the store exactly as it was once they are put back).
pub fn stored_records(path: &str, params: &BTreeMap<String, String>) -> Vec<StoredRecord> {
    use engine::record::ssm;
    let under = format!("{path}/");
    let relative: BTreeMap<String, String> = params
        .iter()
        .filter_map(|(n, v)| Some((n.strip_prefix(&under)?.to_owned(), v.clone())))
        .collect();
    ssm::Snapshot::decode(&relative)
        .records()
        .into_iter()
        .map(|record| {
            let head = format!("{under}{}", ssm::key(&record.address));
            let prefix = format!("{head}-");
            let mut parameters = vec![(head.clone(), params[&head].clone())];
            parameters.extend(
                params
                    .iter()
                    .filter(|(n, _)| n.starts_with(&prefix))
                    .map(|(n, v)| (n.clone(), v.clone())),
            );
            StoredRecord { record, parameters }
        })
        .collect()
}

/// A marker tag found on a live object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerHit {
    /// The object as the witness names it in an [`Inventory`], when known.
    pub at: Option<(Kind, String)>,
    pub object: String,
    pub key: String,
    pub value: String,
}

/// The AWS CLI pointed at one twin: its reads here, its out-of-band
/// writes (the running system's own changes, the stages' tampering) in
/// [`tamper`].
pub struct Witness {
    pub side: Side,
    cli: Cli,
    endpoint: String,
    home: PathBuf,
}

impl Witness {
    pub fn new(
        clock: &Clock,
        side: Side,
        aws: &Path,
        endpoint: &str,
        region: &str,
        work: &Path,
    ) -> Result<Witness, WitnessError> {
        let home = work.join(format!("witness-{}", side.name()));
        fs::create_dir_all(&home).map_err(|source| WitnessError::Io {
            path: home.clone(),
            source,
        })?;
        let home_var = home.display().to_string();
        let env = [
            ("HOME", home_var.as_str()),
            ("AWS_ACCESS_KEY_ID", "test"),
            ("AWS_SECRET_ACCESS_KEY", "test"),
            ("AWS_DEFAULT_REGION", region),
            ("AWS_CONFIG_FILE", "/dev/null"),
            ("AWS_SHARED_CREDENTIALS_FILE", "/dev/null"),
            ("AWS_MAX_ATTEMPTS", "2"),
        ];
        Ok(Witness {
            side,
            cli: Cli::new(clock, aws, &home, &env),
            endpoint: endpoint.to_owned(),
            home,
        })
    }

    /// `aws <args> --output json`; `Ok(None)` when the call failed with one
    /// of the `absent` error codes (the object is not there).
    fn call_or_absent(
        &self,
        args: &[&str],
        absent: &[&str],
    ) -> Result<Option<Value>, WitnessError> {
        let label = format!(
            "aws {} {} on the {}",
            args[0],
            args.get(1).unwrap_or(&""),
            self.side
        );
        let mut full = args.to_vec();
        full.extend(["--output", "json", "--endpoint-url", &self.endpoint]);
        let out = self.cli.call(&label, &full).map_err(|e| match e {
            CliError::Process(p) => WitnessError::Process(p),
            e => WitnessError::Cli {
                side: self.side,
                reason: e.to_string(),
            },
        })?;
        let joined = args.join(" ");
        if out.code != 0 {
            let stderr = out.stderr.trim().to_owned();
            if absent.iter().any(|code| stderr.contains(code)) {
                return Ok(None);
            }
            return Err(WitnessError::Call {
                side: self.side,
                args: joined,
                stderr,
            });
        }
        let text = out.stdout;
        if text.trim().is_empty() {
            return Ok(Some(Value::Null));
        }
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| WitnessError::Unreadable {
                side: self.side,
                args: joined,
                reason: e.to_string(),
            })
    }

    fn call(&self, args: &[&str]) -> Result<Value, WitnessError> {
        Ok(self.call_or_absent(args, &[])?.unwrap_or(Value::Null))
    }

    /// Every live object of `kinds`.
    pub fn inventory(&self, kinds: &BTreeSet<Kind>) -> Result<Inventory, WitnessError> {
        let has = |k| kinds.contains(&k);
        let need_buckets =
            has(Kind::Bucket) || has(Kind::BucketVersioning) || has(Kind::BucketPolicy);
        let need_queues =
            has(Kind::Queue) || has(Kind::QueuePolicy) || has(Kind::QueueRedrivePolicy);
        let need_roles =
            has(Kind::Role) || has(Kind::RolePolicyAttachment) || has(Kind::RolePolicy);
        let mut inv = Inventory::default();
        // First the listings, side by side.
        let (buckets, queues, topics, subs, roles, policies, tables, params, tagged) =
            thread::scope(|s| {
                let list = |want: bool,
                            args: &'static [&'static str],
                            field: &'static str,
                            key: Option<&'static str>| {
                    s.spawn(move || -> Result<Vec<String>, WitnessError> {
                        if !want {
                            return Ok(Vec::new());
                        }
                        let v = self.call(args)?;
                        Ok(strings(&v[field], key))
                    })
                };
                let b = list(
                    need_buckets,
                    &["s3api", "list-buckets"],
                    "Buckets",
                    Some("Name"),
                );
                let q = list(need_queues, &["sqs", "list-queues"], "QueueUrls", None);
                let t = list(
                    has(Kind::Topic),
                    &["sns", "list-topics"],
                    "Topics",
                    Some("TopicArn"),
                );
                let su = list(
                    has(Kind::Subscription),
                    &["sns", "list-subscriptions"],
                    "Subscriptions",
                    Some("SubscriptionArn"),
                );
                let r = list(
                    need_roles,
                    &["iam", "list-roles"],
                    "Roles",
                    Some("RoleName"),
                );
                let p = list(
                    has(Kind::Policy),
                    &["iam", "list-policies", "--scope", "Local"],
                    "Policies",
                    Some("PolicyName"),
                );
                let tb = list(
                    has(Kind::Table),
                    &["dynamodb", "list-tables"],
                    "TableNames",
                    None,
                );
                let pa = s.spawn(move || -> Result<Vec<String>, WitnessError> {
                    if !has(Kind::Parameter) {
                        return Ok(Vec::new());
                    }
                    Ok(listed_parameters(
                        &self.call(&["ssm", "describe-parameters"])?,
                    ))
                });
                let ta = s.spawn(move || -> Result<Vec<String>, WitnessError> {
                    if !has(Kind::Tagged) {
                        return Ok(Vec::new());
                    }
                    Ok(self
                        .tagging_api()?
                        .into_iter()
                        .filter(|(arn, _)| matches!(Kind::of_arn(arn), Some((Kind::Tagged, _))))
                        .map(|(arn, _)| arn)
                        .collect())
                });
                let j = |h: thread::ScopedJoinHandle<'_, Result<Vec<String>, WitnessError>>| {
                    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
                };
                (j(b), j(q), j(t), j(su), j(r), j(p), j(tb), j(pa), j(ta))
            });
        let (buckets, queue_urls, roles) = (buckets?, queues?, roles?);
        for (k, ids) in [
            (
                Kind::Topic,
                topics?
                    .iter()
                    .map(|a| last_segment(a, ':'))
                    .collect::<Vec<_>>(),
            ),
            (Kind::Subscription, subs?),
            (Kind::Policy, policies?),
            (Kind::Table, tables?),
            (Kind::Parameter, params?),
            (Kind::Tagged, tagged?),
        ] {
            for id in ids {
                inv.insert(k, id);
            }
        }
        if has(Kind::Bucket) {
            buckets
                .iter()
                .for_each(|b| inv.insert(Kind::Bucket, b.clone()));
        }
        if has(Kind::Queue) {
            queue_urls
                .iter()
                .for_each(|u| inv.insert(Kind::Queue, last_segment(u, '/')));
        }
        if has(Kind::Role) {
            roles.iter().for_each(|r| inv.insert(Kind::Role, r.clone()));
        }
        // Then the sub-resources, read per parent, and the types
        // `reads.toml` lists, side by side.
        let found: Vec<Result<Vec<(Kind, String)>, WitnessError>> = thread::scope(|s| {
            let mut hs = Vec::new();
            for k in kinds {
                if let Kind::Listed(r) = *k {
                    hs.push(s.spawn(move || {
                        let args: Vec<&str> = r.list.iter().map(String::as_str).collect();
                        let mut live = Vec::new();
                        for id in strings_deep(&self.call(&args)?) {
                            if self.alive(r, &id)? {
                                live.push((*k, id));
                            }
                        }
                        Ok(live)
                    }));
                }
            }
            for b in &buckets {
                if has(Kind::BucketVersioning) {
                    hs.push(s.spawn(move || {
                        let v = self.call(&["s3api", "get-bucket-versioning", "--bucket", b])?;
                        Ok(if v["Status"] == "Enabled" {
                            vec![(Kind::BucketVersioning, b.clone())]
                        } else {
                            vec![]
                        })
                    }));
                }
                if has(Kind::BucketPolicy) {
                    hs.push(s.spawn(move || {
                        let v = self.call_or_absent(
                            &["s3api", "get-bucket-policy", "--bucket", b],
                            &["NoSuchBucketPolicy"],
                        )?;
                        Ok(v.map(|_| (Kind::BucketPolicy, b.clone()))
                            .into_iter()
                            .collect())
                    }));
                }
            }
            if has(Kind::QueuePolicy) || has(Kind::QueueRedrivePolicy) {
                for u in &queue_urls {
                    hs.push(s.spawn(move || {
                        let v = self.call(&[
                            "sqs",
                            "get-queue-attributes",
                            "--queue-url",
                            u,
                            "--attribute-names",
                            "Policy",
                            "RedrivePolicy",
                        ])?;
                        let name = last_segment(u, '/');
                        let mut out = vec![];
                        if has(Kind::QueuePolicy) && v["Attributes"]["Policy"].is_string() {
                            out.push((Kind::QueuePolicy, name.clone()));
                        }
                        if has(Kind::QueueRedrivePolicy)
                            && v["Attributes"]["RedrivePolicy"].is_string()
                        {
                            out.push((Kind::QueueRedrivePolicy, name));
                        }
                        Ok(out)
                    }));
                }
            }
            if has(Kind::RolePolicyAttachment) {
                for r in &roles {
                    hs.push(s.spawn(move || {
                        let v =
                            self.call(&["iam", "list-attached-role-policies", "--role-name", r])?;
                        Ok(strings(&v["AttachedPolicies"], Some("PolicyArn"))
                            .into_iter()
                            .map(|arn| (Kind::RolePolicyAttachment, format!("{r}/{arn}")))
                            .collect())
                    }));
                }
            }
            if has(Kind::RolePolicy) {
                for r in &roles {
                    hs.push(s.spawn(move || {
                        let v = self.call(&["iam", "list-role-policies", "--role-name", r])?;
                        Ok(strings(&v["PolicyNames"], None)
                            .into_iter()
                            .map(|name| (Kind::RolePolicy, format!("{r}/{name}")))
                            .collect())
                    }));
                }
            }
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        for r in found {
            for (k, id) in r? {
                inv.insert(k, id);
            }
        }
        Ok(inv)
    }

    /// Every object the tagging API lists, by ARN, with its tags as the
    /// API gives them (`[{Key, Value}]`).
    fn tagging_api(&self) -> Result<Vec<(String, Value)>, WitnessError> {
        let v = self.call(&["resourcegroupstaggingapi", "get-resources"])?;
        Ok(v["ResourceTagMappingList"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| Some((m["ResourceARN"].as_str()?.to_owned(), m["Tags"].clone())))
            .collect())
    }

    /// An object's tags as the tagging API lists them, by its ARN; `None`
    /// when it lists no such object.
    pub fn object_tags(&self, arn: &str) -> Result<Option<BTreeMap<String, String>>, WitnessError> {
        let v = self.call(&[
            "resourcegroupstaggingapi",
            "get-resources",
            "--resource-arn-list",
            arn,
        ])?;
        Ok(v["ResourceTagMappingList"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["ResourceARN"] == arn)
            .map(|m| {
                m["Tags"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| {
                        Some((
                            t["Key"].as_str()?.to_owned(),
                            t["Value"].as_str()?.to_owned(),
                        ))
                    })
                    .collect()
            }))
    }

    /// Every marker tag on any object of `inv`.
    pub fn markers(&self, inv: &Inventory) -> Result<Vec<MarkerHit>, WitnessError> {
        let roles: Vec<String> = inv
            .0
            .get(&Kind::Role)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        let has_policies = inv.0.get(&Kind::Policy).is_some_and(|s| !s.is_empty());
        let results: Vec<Result<Vec<MarkerHit>, WitnessError>> = thread::scope(|s| {
            let mut hs = Vec::new();
            // The tagging API covers s3, sqs, sns, dynamodb and ssm; IAM is
            // read per role and per policy.
            hs.push(s.spawn(|| {
                Ok(self
                    .tagging_api()?
                    .iter()
                    .flat_map(|(arn, tags)| marker_tags(arn, tags))
                    .collect())
            }));
            for r in &roles {
                hs.push(s.spawn(move || {
                    let v = self.call(&["iam", "list-role-tags", "--role-name", r])?;
                    let mut hits = marker_tags(&format!("iam role {r}"), &v["Tags"]);
                    for h in &mut hits {
                        h.at = Some((Kind::Role, r.clone()));
                    }
                    Ok(hits)
                }));
            }
            if has_policies {
                hs.push(s.spawn(|| {
                    let v = self.call(&["iam", "list-policies", "--scope", "Local"])?;
                    let mut hits = Vec::new();
                    for p in v["Policies"].as_array().into_iter().flatten() {
                        let arn = p["Arn"].as_str().unwrap_or("");
                        let t = self.call(&["iam", "list-policy-tags", "--policy-arn", arn])?;
                        hits.extend(marker_tags(arn, &t["Tags"]));
                    }
                    Ok(hits)
                }));
            }
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut out = Vec::new();
        for r in results {
            out.extend(r?);
        }
        // The tagging API may still list an object its own read no longer
        // does (moto's deleted prefix lists): it is gone.
        out.retain(|h| match &h.at {
            Some((k @ Kind::Listed(_), id)) => inv.contains(*k, id),
            _ => true,
        });
        Ok(out)
    }

    fn queue_url(&self, queue: &str) -> Result<Option<String>, WitnessError> {
        let v = self.call_or_absent(
            &["sqs", "get-queue-url", "--queue-name", queue],
            &["NonExistentQueue", "QueueDoesNotExist"],
        )?;
        Ok(v.and_then(|v| v["QueueUrl"].as_str().map(str::to_owned)))
    }

    fn queue_url_required(&self, queue: &str) -> Result<String, WitnessError> {
        self.queue_url(queue)?.ok_or_else(|| WitnessError::Call {
            side: self.side,
            args: format!("sqs get-queue-url --queue-name {queue}"),
            stderr: "the queue does not exist".into(),
        })
    }

    /// The keys in a bucket, or `None` if the bucket is gone.
    pub fn object_keys(&self, bucket: &str) -> Result<Option<Vec<String>>, WitnessError> {
        let v = self.call_or_absent(
            &["s3api", "list-objects-v2", "--bucket", bucket],
            &["NoSuchBucket"],
        )?;
        Ok(v.map(|v| strings(&v["Contents"], Some("Key"))))
    }

    /// A security group's id, by its name; `None` when there is none.
    pub fn security_group_id(&self, name: &str) -> Result<Option<String>, WitnessError> {
        let v = self.call(&[
            "ec2",
            "describe-security-groups",
            "--filters",
            &format!("Name=group-name,Values={name}"),
        ])?;
        Ok(v["SecurityGroups"][0]["GroupId"]
            .as_str()
            .map(str::to_owned))
    }

    /// The id of a security group's TCP ingress rule on `port` from
    /// `cidr`; `None` when the group or the rule is gone.
    pub fn ingress_rule(
        &self,
        group: &str,
        cidr: &str,
        port: u16,
    ) -> Result<Option<String>, WitnessError> {
        match self.security_group_id(group)? {
            Some(id) => self.ingress_rule_of(&id, cidr, port),
            None => Ok(None),
        }
    }

    /// [`Witness::ingress_rule`] of the security group with id `id`.
    pub(crate) fn ingress_rule_of(
        &self,
        id: &str,
        cidr: &str,
        port: u16,
    ) -> Result<Option<String>, WitnessError> {
        let v = self.call(&[
            "ec2",
            "describe-security-group-rules",
            "--filters",
            &format!("Name=group-id,Values={id}"),
        ])?;
        Ok(v["SecurityGroupRules"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| {
                r["IsEgress"] == false
                    && r["IpProtocol"] == "tcp"
                    && r["FromPort"] == port
                    && r["CidrIpv4"] == cidr
            })
            .and_then(|r| r["SecurityGroupRuleId"].as_str().map(str::to_owned)))
    }

    /// Messages waiting in a queue, or `None` if the queue is gone.
    pub fn message_count(&self, queue: &str) -> Result<Option<u64>, WitnessError> {
        let Some(url) = self.queue_url(queue)? else {
            return Ok(None);
        };
        let v = self.call(&[
            "sqs",
            "get-queue-attributes",
            "--queue-url",
            &url,
            "--attribute-names",
            "ApproximateNumberOfMessages",
        ])?;
        let n = v["Attributes"]["ApproximateNumberOfMessages"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok(Some(n))
    }

    /// A queue's access policy, if it has one.
    pub fn queue_policy(&self, queue: &str) -> Result<Option<String>, WitnessError> {
        let url = self.queue_url_required(queue)?;
        let v = self.call(&[
            "sqs",
            "get-queue-attributes",
            "--queue-url",
            &url,
            "--attribute-names",
            "Policy",
        ])?;
        Ok(v["Attributes"]["Policy"]
            .as_str()
            .filter(|p| !p.is_empty())
            .map(str::to_owned))
    }

    /// The endpoints of a topic's subscriptions, sorted.
    pub fn topic_endpoints(&self, topic: &str) -> Result<Vec<String>, WitnessError> {
        let topics = self.call(&["sns", "list-topics"])?;
        let suffix = format!(":{topic}");
        let Some(arn) = strings(&topics["Topics"], Some("TopicArn"))
            .into_iter()
            .find(|a| a.ends_with(&suffix))
        else {
            return Err(WitnessError::Call {
                side: self.side,
                args: "sns list-topics".into(),
                stderr: format!("no topic named {topic}"),
            });
        };
        let v = self.call(&["sns", "list-subscriptions-by-topic", "--topic-arn", &arn])?;
        let mut endpoints = strings(&v["Subscriptions"], Some("Endpoint"));
        endpoints.sort();
        Ok(endpoints)
    }

    /// A queue's ARN.
    pub fn queue_arn(&self, queue: &str) -> Result<String, WitnessError> {
        let url = self.queue_url_required(queue)?;
        let v = self.call(&[
            "sqs",
            "get-queue-attributes",
            "--queue-url",
            &url,
            "--attribute-names",
            "QueueArn",
        ])?;
        Ok(v["Attributes"]["QueueArn"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    /// The names of the managed policies attached to a role, sorted.
    pub fn attached_policies(&self, role: &str) -> Result<Vec<String>, WitnessError> {
        let v = self.call(&["iam", "list-attached-role-policies", "--role-name", role])?;
        let mut names = strings(&v["AttachedPolicies"], Some("PolicyName"));
        names.sort();
        Ok(names)
    }

    fn table_arn(&self, table: &str) -> Result<String, WitnessError> {
        let v = self.call(&["dynamodb", "describe-table", "--table-name", table])?;
        Ok(v["Table"]["TableArn"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    /// A table's tags.
    pub fn table_tags(&self, table: &str) -> Result<BTreeMap<String, String>, WitnessError> {
        let arn = self.table_arn(table)?;
        let v = self.call(&["dynamodb", "list-tags-of-resource", "--resource-arn", &arn])?;
        Ok(v["Tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| {
                Some((
                    t["Key"].as_str()?.to_owned(),
                    t["Value"].as_str()?.to_owned(),
                ))
            })
            .collect())
    }

    /// Every object of `inv` described field by field, keyed as
    /// `kind identity`; a subscription is keyed by its topic, protocol and
    /// endpoint, since its ARN is generated. The descriptions are raw; see
    /// [`normalised`].
    pub fn describe(&self, inv: &Inventory) -> Result<BTreeMap<String, Value>, WitnessError> {
        let queue_urls: BTreeMap<String, String> = if inv.0.keys().any(|k| {
            matches!(
                k,
                Kind::Queue | Kind::QueuePolicy | Kind::QueueRedrivePolicy
            )
        }) {
            strings(&self.call(&["sqs", "list-queues"])?["QueueUrls"], None)
                .into_iter()
                .map(|u| (last_segment(&u, '/'), u))
                .collect()
        } else {
            BTreeMap::new()
        };
        let objects: Vec<(Kind, &String)> = inv
            .0
            .iter()
            .flat_map(|(k, ids)| ids.iter().map(move |id| (*k, id)))
            .collect();
        // A few at a time: each is a Python process or three, and twenty at
        // once only make two cores thrash.
        let mut out = BTreeMap::new();
        for chunk in objects.chunks(DESCRIBE_AT_ONCE) {
            let results: Vec<Result<(String, Value), WitnessError>> = thread::scope(|s| {
                let hs: Vec<_> = chunk
                    .iter()
                    .map(|(k, id)| {
                        let urls = &queue_urls;
                        s.spawn(move || self.describe_one(*k, id, urls))
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            for r in results {
                // Two objects described alike (generated ids reduced) both
                // count: the second is `key #2`.
                let (key, v) = r?;
                let mut k = key.clone();
                let mut n = 2;
                while out.contains_key(&k) {
                    k = format!("{key} #{n}");
                    n += 1;
                }
                out.insert(k, v);
            }
        }
        Ok(out)
    }

    /// Whether a listed object is live, as its read's `alive` call says
    /// (always, for a read with none).
    fn alive(&self, r: &Read, id: &str) -> Result<bool, WitnessError> {
        let Some(call) = &r.alive else {
            return Ok(true);
        };
        let args: Vec<String> = call.iter().map(|a| a.replace("{id}", id)).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Ok(self.call(&args)? == Value::Bool(true))
    }

    fn describe_one(
        &self,
        k: Kind,
        id: &str,
        queue_urls: &BTreeMap<String, String>,
    ) -> Result<(String, Value), WitnessError> {
        let key = format!("{} {id}", k.noun());
        let url = || {
            queue_urls
                .get(id)
                .cloned()
                .ok_or_else(|| WitnessError::Call {
                    side: self.side,
                    args: format!("sqs list-queues (looking for {id})"),
                    stderr: "the queue is not listed".into(),
                })
        };
        let v = match k {
            Kind::Bucket => {
                let tags = self.call_or_absent(
                    &["s3api", "get-bucket-tagging", "--bucket", id],
                    &["NoSuchTagSet"],
                )?;
                serde_json::json!({ "Tags": tags.map(|t| t["TagSet"].clone()) })
            }
            Kind::BucketVersioning => {
                self.call(&["s3api", "get-bucket-versioning", "--bucket", id])?
            }
            Kind::BucketPolicy => self.call(&["s3api", "get-bucket-policy", "--bucket", id])?,
            Kind::Queue => {
                let u = url()?;
                let mut a = self.call(&[
                    "sqs",
                    "get-queue-attributes",
                    "--queue-url",
                    &u,
                    "--attribute-names",
                    "All",
                ])?;
                let tags = self.call(&["sqs", "list-queue-tags", "--queue-url", &u])?;
                a["Tags"] = tags["Tags"].clone();
                a
            }
            Kind::QueuePolicy | Kind::QueueRedrivePolicy => {
                let name = if k == Kind::QueuePolicy {
                    "Policy"
                } else {
                    "RedrivePolicy"
                };
                let a = self.call(&[
                    "sqs",
                    "get-queue-attributes",
                    "--queue-url",
                    &url()?,
                    "--attribute-names",
                    name,
                ])?;
                a["Attributes"][name].clone()
            }
            Kind::Topic => {
                let arn = self.topic_arn(id)?;
                let mut a = self.call(&["sns", "get-topic-attributes", "--topic-arn", &arn])?;
                let tags = self.call(&["sns", "list-tags-for-resource", "--resource-arn", &arn])?;
                a["Tags"] = tags["Tags"].clone();
                a
            }
            Kind::Subscription => {
                let a = self.call(&[
                    "sns",
                    "get-subscription-attributes",
                    "--subscription-arn",
                    id,
                ])?;
                let at = &a["Attributes"];
                let key = format!(
                    "{} {} {} {}",
                    k.noun(),
                    at["TopicArn"].as_str().unwrap_or(""),
                    at["Protocol"].as_str().unwrap_or(""),
                    at["Endpoint"].as_str().unwrap_or("")
                );
                return Ok((key, a));
            }
            Kind::Role => {
                let mut r = self.call(&["iam", "get-role", "--role-name", id])?["Role"].clone();
                let tags = self.call(&["iam", "list-role-tags", "--role-name", id])?;
                r["Tags"] = tags["Tags"].clone();
                r
            }
            Kind::Policy => {
                let arn = self.policy_arn(id)?;
                let mut p =
                    self.call(&["iam", "get-policy", "--policy-arn", &arn])?["Policy"].clone();
                let version = p["DefaultVersionId"].as_str().unwrap_or("v1").to_owned();
                let doc = self.call(&[
                    "iam",
                    "get-policy-version",
                    "--policy-arn",
                    &arn,
                    "--version-id",
                    &version,
                ])?;
                p["Document"] = doc["PolicyVersion"]["Document"].clone();
                let tags = self.call(&["iam", "list-policy-tags", "--policy-arn", &arn])?;
                p["Tags"] = tags["Tags"].clone();
                p
            }
            Kind::RolePolicyAttachment => Value::Bool(true),
            Kind::RolePolicy => {
                let (role, name) = id.split_once('/').ok_or_else(|| WitnessError::Call {
                    side: self.side,
                    args: format!("iam get-role-policy ({id})"),
                    stderr: "an inline policy is named role/policy".into(),
                })?;
                self.call(&[
                    "iam",
                    "get-role-policy",
                    "--role-name",
                    role,
                    "--policy-name",
                    name,
                ])?
            }
            Kind::Table => {
                let mut t = self.call(&["dynamodb", "describe-table", "--table-name", id])?
                    ["Table"]
                    .clone();
                let arn = t["TableArn"].as_str().unwrap_or("").to_owned();
                let tags =
                    self.call(&["dynamodb", "list-tags-of-resource", "--resource-arn", &arn])?;
                t["Tags"] = tags["Tags"].clone();
                t
            }
            Kind::Listed(r) => {
                // Keyed by what it is, its generated ids reduced, so that
                // two creations of one configuration meet.
                let v = match &r.describe {
                    Some(call) => {
                        let args: Vec<String> =
                            call.iter().map(|a| a.replace("{id}", id)).collect();
                        let args: Vec<&str> = args.iter().map(String::as_str).collect();
                        normalised(&self.call(&args)?)
                    }
                    None => Value::String(generated_ids_out(id)),
                };
                return Ok((format!("{} {v}", k.noun()), v));
            }
            Kind::Tagged => {
                // Its ARN holds a generated id, so it is keyed by its class
                // and its tags, the marker tags left out.
                let v = self.call(&[
                    "resourcegroupstaggingapi",
                    "get-resources",
                    "--resource-arn-list",
                    id,
                ])?;
                let tags = normalised(&v["ResourceTagMappingList"][0]["Tags"]);
                let key = format!("{} {}", arn_class(id), tags);
                return Ok((key, serde_json::json!({ "Tags": tags })));
            }
            Kind::Parameter => {
                let mut p =
                    self.call(&["ssm", "get-parameter", "--name", id])?["Parameter"].clone();
                let tags = self.call(&[
                    "ssm",
                    "list-tags-for-resource",
                    "--resource-type",
                    "Parameter",
                    "--resource-id",
                    id,
                ])?;
                p["Tags"] = tags["TagList"].clone();
                p
            }
        };
        Ok((key, v))
    }

    fn topic_arn(&self, name: &str) -> Result<String, WitnessError> {
        let v = self.call(&["sns", "list-topics"])?;
        strings(&v["Topics"], Some("TopicArn"))
            .into_iter()
            .find(|a| last_segment(a, ':') == name)
            .ok_or_else(|| WitnessError::Call {
                side: self.side,
                args: "sns list-topics".into(),
                stderr: format!("no topic named {name}"),
            })
    }

    fn policy_arn(&self, name: &str) -> Result<String, WitnessError> {
        let v = self.call(&["iam", "list-policies", "--scope", "Local"])?;
        v["Policies"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["PolicyName"] == name)
            .and_then(|p| p["Arn"].as_str().map(str::to_owned))
            .ok_or_else(|| WitnessError::Call {
                side: self.side,
                args: "iam list-policies --scope Local".into(),
                stderr: format!("no policy named {name}"),
            })
    }

    /// A parameter's value, or `None` if it is not there.
    pub fn parameter_value(&self, name: &str) -> Result<Option<String>, WitnessError> {
        let v = self.call_or_absent(
            &["ssm", "get-parameter", "--name", name],
            &["ParameterNotFound"],
        )?;
        Ok(v.and_then(|v| v["Parameter"]["Value"].as_str().map(str::to_owned)))
    }

    /// Overwrite an existing parameter's value, keeping its tags.
    pub fn overwrite_parameter(&self, name: &str, value: &str) -> Result<(), WitnessError> {
        self.call(&[
            "ssm",
            "put-parameter",
            "--name",
            name,
            "--value",
            value,
            "--type",
            "String",
            "--overwrite",
        ])
        .map(drop)
    }

    /// A parameter's tags, as `(key, value)`.
    pub fn parameter_tags(&self, name: &str) -> Result<Vec<(String, String)>, WitnessError> {
        let v = self.call(&[
            "ssm",
            "list-tags-for-resource",
            "--resource-type",
            "Parameter",
            "--resource-id",
            name,
        ])?;
        Ok(v["TagList"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| {
                Some((
                    t["Key"].as_str()?.to_owned(),
                    t["Value"].as_str()?.to_owned(),
                ))
            })
            .collect())
    }

    /// Every parameter of `estate`'s record store in the live system
    /// (`/choudoufu/records/<estate>/...`), full name to value: its
    /// records' heads and parts and `root.outputs`. The CLI pages through
    /// GetParametersByPath itself (moto answers ten a page) and prints the
    /// pages as one list.
    pub fn record_parameters(
        &self,
        estate: &str,
    ) -> Result<BTreeMap<String, String>, WitnessError> {
        let path = engine::record::ssm::path(estate);
        let v = self.call(&[
            "ssm",
            "get-parameters-by-path",
            "--path",
            &path,
            "--recursive",
            "--with-decryption",
        ])?;
        Ok(v["Parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| {
                Some((
                    p["Name"].as_str()?.to_owned(),
                    p["Value"].as_str()?.to_owned(),
                ))
            })
            .collect())
    }

    /// The records `estate`'s store in the live system holds, by address:
    /// those that read back whole, as the engine reads them.
    pub fn records(&self, estate: &str) -> Result<Vec<StoredRecord>, WitnessError> {
        let params = self.record_parameters(estate)?;
        Ok(stored_records(&engine::record::ssm::path(estate), &params))
    }

    /// The record of `address` in `estate`'s store, if it holds one.
    pub fn record_of(
        &self,
        estate: &str,
        address: &str,
    ) -> Result<Option<StoredRecord>, WitnessError> {
        Ok(self
            .records(estate)?
            .into_iter()
            .find(|r| r.address() == address))
    }

    /// Create a parameter carrying `tags`.
    pub fn put_parameter_tagged(
        &self,
        name: &str,
        value: &str,
        tags: &[(String, String)],
    ) -> Result<(), WitnessError> {
        let mut args: Vec<String> = [
            "ssm",
            "put-parameter",
            "--name",
            name,
            "--value",
            value,
            "--type",
            "String",
        ]
        .map(str::to_owned)
        .to_vec();
        if !tags.is_empty() {
            // JSON, since the CLI's shorthand cannot hold an address's brackets.
            let list: Vec<Value> = tags
                .iter()
                .map(|(k, v)| serde_json::json!({ "Key": k, "Value": v }))
                .collect();
            args.push("--tags".into());
            args.push(Value::Array(list).to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.call(&args).map(drop)
    }

    /// A queue's tags, or `None` if the queue is gone.
    pub fn queue_tags(
        &self,
        queue: &str,
    ) -> Result<Option<BTreeMap<String, String>>, WitnessError> {
        let Some(url) = self.queue_url(queue)? else {
            return Ok(None);
        };
        let v = self.call(&["sqs", "list-queue-tags", "--queue-url", &url])?;
        Ok(Some(
            v["Tags"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect(),
        ))
    }

    pub fn untag_queue(&self, queue: &str, key: &str) -> Result<(), WitnessError> {
        let url = self.queue_url_required(queue)?;
        self.call(&["sqs", "untag-queue", "--queue-url", &url, "--tag-keys", key])
            .map(drop)
    }

    /// The marker tag keys on an object in a bucket.
    pub fn object_marker_keys(&self, bucket: &str, key: &str) -> Result<Vec<String>, WitnessError> {
        let v = self.call(&[
            "s3api",
            "get-object-tagging",
            "--bucket",
            bucket,
            "--key",
            key,
        ])?;
        Ok(strings(&v["TagSet"], Some("Key"))
            .into_iter()
            .filter(|k| MARKER_KEYS.contains(&k.as_str()))
            .collect())
    }

    pub fn put_parameter(&self, name: &str, value: &str) -> Result<(), WitnessError> {
        self.call(&[
            "ssm",
            "put-parameter",
            "--name",
            name,
            "--value",
            value,
            "--type",
            "String",
        ])
        .map(drop)
    }
}

/// Fields a live object's description carries that differ between two
/// creations of the same configuration: timestamps, generated ids, versions
/// and counters. They are left out before two objects are compared.
const VOLATILE: &[&str] = &[
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesDelayed",
    "ApproximateNumberOfMessagesNotVisible",
    "CreateDate",
    "UpdateDate",
    "CreationDateTime",
    "CreationDate",
    "CreationTime",
    "CreateTime",
    "LastModifiedDate",
    "RoleId",
    "PolicyId",
    "TableId",
    "Version",
    "SubscriptionArn",
    "SubscriptionsConfirmed",
    "SubscriptionsPending",
    "SubscriptionsDeleted",
    "RoleLastUsed",
    "LastUpdateToPayPerRequestDateTime",
    "LastIncreaseDateTime",
    "LastDecreaseDateTime",
];

/// A description made comparable: volatile fields and marker tags left
/// out, policy documents (strings holding JSON) parsed, so that two
/// serialisations of one document compare equal.
pub fn normalised(v: &Value) -> Value {
    match v {
        // A tag map (as SQS lists tags) loses its marker keys too.
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| {
                    !VOLATILE.contains(&k.as_str()) && !MARKER_KEYS.contains(&k.as_str())
                })
                .map(|(k, x)| (k.clone(), normalised(x)))
                .filter(|(_, x)| !is_empty(x))
                .collect(),
        ),
        // A tag list loses its marker tags and is put in key order.
        Value::Array(a) => {
            let mut items: Vec<Value> = a
                .iter()
                .filter(|t| !t["Key"].as_str().is_some_and(|k| MARKER_KEYS.contains(&k)))
                .map(normalised)
                .collect();
            if items.iter().all(|t| t["Key"].is_string()) {
                items.sort_by(|x, y| x["Key"].as_str().cmp(&y["Key"].as_str()));
            }
            Value::Array(items)
        }
        Value::String(s) if s.starts_with('{') => match serde_json::from_str::<Value>(s) {
            Ok(parsed) => normalised(&parsed),
            Err(_) => Value::String(generated_ids_out(s)),
        },
        Value::String(s) => Value::String(generated_ids_out(s)),
        _ => v.clone(),
    }
}

/// `s` with every generated id of the EC2 kind (`vpc-0a1b2c3d4e5f60718`:
/// a lower-case prefix, a dash, 8 to 17 hex digits) reduced to its prefix
/// (`vpc-*`): a value naming another object (a parameter holding a VPC's
/// id) differs between two creations only there; and every UUID (a KMS
/// key's id) reduced to `*`.
pub fn generated_ids_out(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if (i == 0 || !b[i - 1].is_ascii_alphanumeric()) && is_uuid_at(b, i) {
            out.push('*');
            i += 36;
            continue;
        }
        if b[i] == b'-' {
            let prefix = b[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_lowercase())
                .count();
            let hex = b[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
                .count();
            let bounded_left = i == prefix || !b[i - prefix - 1].is_ascii_alphanumeric();
            let bounded_right = b
                .get(i + 1 + hex)
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            if prefix > 0 && (8..=17).contains(&hex) && bounded_left && bounded_right {
                out.push_str("-*");
                i += 1 + hex;
                continue;
            }
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// Null, `[]` and `{}`: an absent tag list reads as one of them.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// Where two descriptions differ, as `path: a != b`.
pub fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    differences_but(a, b, path, &BTreeSet::new(), out)
}

/// [`differences`], less those at the paths of `skip` (as
/// [`differing_paths`] names them).
pub fn differences_but(
    a: &Value,
    b: &Value,
    path: &str,
    skip: &BTreeSet<String>,
    out: &mut Vec<String>,
) {
    each_difference(a, b, path.to_owned(), &mut |path, a, b| {
        if !skip.contains(&path) {
            out.push(format!("{path}: {a} != {b}"));
        }
    });
}

/// The paths at which two descriptions by key differ, each under its key
/// (`parameter /a.Parameter.Value`); keys only one side holds are left out.
pub fn differing_paths(
    a: &BTreeMap<String, Value>,
    b: &BTreeMap<String, Value>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (k, x) in a {
        if let Some(y) = b.get(k) {
            each_difference(x, y, k.clone(), &mut |path, _, _| {
                out.insert(path);
            });
        }
    }
    out
}

/// Calls `found` with the path and both sides of every leaf at which two
/// JSON values differ, objects compared key by key (a key one side lacks
/// is null there), anything else whole.
fn each_difference(
    a: &Value,
    b: &Value,
    path: String,
    found: &mut impl FnMut(String, &Value, &Value),
) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()).collect::<BTreeSet<_>>() {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                each_difference(va, vb, format!("{path}.{k}"), found);
            }
        }
        _ if a != b => found(path, a, b),
        _ => {}
    }
}

/// Whether a UUID (8-4-4-4-12 hex digits, not followed by a letter or
/// digit) starts at `b[i]`.
fn is_uuid_at(b: &[u8], i: usize) -> bool {
    let Some(u) = b.get(i..i + 36) else {
        return false;
    };
    let shape = u.iter().enumerate().all(|(j, c)| match j {
        8 | 13 | 18 | 23 => *c == b'-',
        _ => c.is_ascii_hexdigit(),
    });
    shape && b.get(i + 36).is_none_or(|c| !c.is_ascii_alphanumeric())
}

/// Every string in a JSON value, depth first: what a `--query` picking
/// identities prints, however its projections nest.
fn strings_deep(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(strings_deep).collect(),
        _ => Vec::new(),
    }
}

/// The strings of an array, or of one key of each element of an array.
fn strings(v: &Value, key: Option<&str>) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| match key {
            Some(k) => e[k].as_str(),
            None => e.as_str(),
        })
        .map(str::to_owned)
        .collect()
}

fn marker_tags(object: &str, tags: &Value) -> Vec<MarkerHit> {
    tags.as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let key = t["Key"].as_str()?;
            MARKER_KEYS.contains(&key).then(|| MarkerHit {
                at: Kind::of_arn(object),
                object: object.to_owned(),
                key: key.to_owned(),
                value: t["Value"].as_str().unwrap_or("").to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn inst(addr: &str, values: Value) -> StateInstance {
        let addr: engine::addr::ResourceInstanceAddr = addr.parse().unwrap();
        StateInstance {
            type_name: addr.type_name.clone(),
            addr,
            values,
            dependencies: Vec::new(),
        }
    }

    #[test]
    fn state_instances_name_live_objects_by_identity_row() {
        let state = vec![
            inst("aws_s3_bucket.b", json!({"bucket": "data"})),
            inst("aws_s3_bucket_policy.p", json!({"bucket": "data"})),
            inst(
                "aws_sqs_queue_redrive_policy.r",
                json!({"queue_url": "http://h:1/123/jobs"}),
            ),
            inst(
                "aws_iam_role_policy_attachment.a",
                json!({"role": "r", "policy_arn": "arn:aws:iam::1:policy/p"}),
            ),
            inst(
                "aws_iam_role_policy.own[\"api\"]",
                json!({"role": "r", "name": "own"}),
            ),
            inst("aws_ssm_parameter.shard[1]", json!({"name": "/x/1"})),
        ];
        let inv = Inventory::of_state(&state).unwrap();
        assert!(inv.contains(Kind::BucketPolicy, "data"));
        assert!(inv.contains(Kind::QueueRedrivePolicy, "jobs"));
        assert!(inv.contains(Kind::RolePolicyAttachment, "r/arn:aws:iam::1:policy/p"));
        assert!(inv.contains(Kind::RolePolicy, "r/own"));
        assert!(!Kind::RolePolicy.tagged());
        assert_eq!(inv.len(), 6);
        assert_eq!(inv.kinds(), 6);
    }

    #[test]
    fn a_row_without_its_identity_is_an_error() {
        let e = Inventory::of_state(&[inst("aws_sqs_queue.q", json!({"name": null}))]).unwrap_err();
        assert!(e.to_string().contains("aws_sqs_queue.q") && e.to_string().contains("name"));
    }

    #[test]
    fn any_other_type_is_an_object_by_arn_when_taggable() {
        let vpc = "arn:aws:ec2:eu-west-1:1:vpc/vpc-0a1b2c3d";
        let state = vec![
            inst(
                "aws_vpc.main",
                json!({"arn": vpc, "tags_all": {"Name": "x"}}),
            ),
            inst(
                "aws_subnet.a",
                json!({"arn": "arn:aws:ec2:eu-west-1:1:subnet/subnet-1", "tags_all": {}}),
            ),
            // Taggable, but no ARN: the witness cannot name it.
            inst(
                "aws_spot_instance_request.s",
                json!({"id": "sir-1", "tags_all": {}}),
            ),
            // No tags: owned through a parent, not stamped.
            inst("aws_route.r", json!({"id": "r-1"})),
            inst("aws_route_table_association.a", json!({"id": "rtbassoc-1"})),
        ];
        let k = Kind::for_type("aws_vpc");
        assert_eq!(k, Kind::Tagged);
        assert!(k.stamped(&state[0]) && k.names(&state[0]));
        assert!(k.stamped(&state[2]) && !k.names(&state[2]));
        assert!(!k.stamped(&state[3]));
        let assoc = Kind::for_type("aws_route_table_association");
        assert!(matches!(assoc, Kind::Listed(_)) && !assoc.stamped(&state[4]));

        let inv = Inventory::of_state(&state).unwrap();
        assert!(inv.contains(Kind::Tagged, vpc));
        assert!(inv.contains(assoc, "rtbassoc-1"));
        assert_eq!(inv.len(), 3);
        // Before markers, the tagging API lists only what carries a tag.
        let tagged = Inventory::of_state_tagged(&state).unwrap();
        assert_eq!(tagged.len(), 2);
        assert_eq!(tagged.counts(), "1 ec2:vpc, 1 route_table_association");
    }

    #[test]
    fn a_class_the_tagging_api_does_not_list_is_left_out_and_named() {
        let mut declared = Inventory::default();
        declared.insert(Kind::Tagged, "arn:aws:ec2:r:1:vpc/vpc-1".into());
        declared.insert(
            Kind::Tagged,
            "arn:aws:ec2:r:1:security-group-rule/sgr-1".into(),
        );
        let mut live = Inventory::default();
        live.insert(Kind::Tagged, "arn:aws:ec2:r:1:vpc/vpc-2".into());
        let (listed, unlisted) = declared.listed_in(&live);
        assert_eq!(listed.names(), "arn:aws:ec2:r:1:vpc/vpc-1");
        assert_eq!(
            unlisted.into_iter().collect::<Vec<_>>(),
            ["ec2:security-group-rule"]
        );
    }

    #[test]
    fn arns_name_their_class_and_kind() {
        assert_eq!(arn_class("arn:aws:ec2:r:1:vpc/vpc-1"), "ec2:vpc");
        assert_eq!(
            arn_class("arn:aws:logs:r:1:log-group:app"),
            "logs:log-group"
        );
        assert_eq!(arn_class("arn:aws:sqs:r:1:jobs"), "sqs");
        assert_eq!(
            Kind::of_arn("arn:aws:sqs:r:1:jobs"),
            Some((Kind::Queue, "jobs".into()))
        );
        let pl = Kind::of_arn("arn:aws:ec2:r:1:managed-prefix-lists/pl-1").unwrap();
        assert_eq!(
            pl,
            (Kind::for_type("aws_ec2_managed_prefix_list"), "pl-1".into())
        );
        let vpc = "arn:aws:ec2:r:1:vpc/vpc-1";
        assert_eq!(Kind::of_arn(vpc), Some((Kind::Tagged, vpc.into())));
    }

    #[test]
    fn set_arithmetic_and_counts() {
        let mut a = Inventory::default();
        a.insert(Kind::Queue, "q1".into());
        a.insert(Kind::Queue, "q2".into());
        a.insert(Kind::Bucket, "b".into());
        let mut b = Inventory::default();
        b.insert(Kind::Queue, "q2".into());
        assert_eq!(a.minus(&b).counts(), "1 s3_bucket, 1 sqs_queue");
        assert_eq!(a.intersect(&b).names(), "sqs_queue q2");
        assert_eq!(Inventory::default().counts(), "nothing");
    }

    #[test]
    fn generated_ids_are_reduced_to_their_prefix() {
        for (s, want) in [
            ("vpc-bfe9a8fb38588f98f", "vpc-*"),
            (
                "arn:aws:ec2:eu-west-1:1:subnet/subnet-0a1b2c3d",
                "arn:aws:ec2:eu-west-1:1:subnet/subnet-*",
            ),
            ("sg-12345678,sg-87654321", "sg-*,sg-*"),
            ("platform-concurrent", "platform-concurrent"),
            ("x1vpc-bfe9a8fb", "x1vpc-bfe9a8fb"),
            ("vpc-bfe9a8fb38588f98f0a", "vpc-bfe9a8fb38588f98f0a"),
            ("refaws-deadbeef1", "refaws-*"),
            (
                "arn:aws:kms:us-east-1:1:key/d93ce324-3269-4d76-8606-48e9f4e0420a",
                "arn:aws:kms:us-east-1:1:key/*",
            ),
            (
                "d93ce324-3269-4d76-8606-48e9f4e0420a7",
                "d93ce324-3269-4d76-8606-48e9f4e0420a7",
            ),
        ] {
            assert_eq!(generated_ids_out(s), want, "{s}");
        }
    }

    #[test]
    fn differing_paths_name_each_leaf_that_differs_under_its_object() {
        let a = json!({
            "parameter /nat/ip": {"Parameter": {"Value": "1.2.3.4", "Type": "String"}},
            "nat_gateway x": {"State": "available"},
            "only here": {"A": 1}
        });
        let b = json!({
            "parameter /nat/ip": {"Parameter": {"Value": "5.6.7.8", "Type": "String"}},
            "nat_gateway x": {"State": "available"}
        });
        let by_key = |v: &Value| -> BTreeMap<String, Value> {
            v.as_object().unwrap().clone().into_iter().collect()
        };
        let paths = differing_paths(&by_key(&a), &by_key(&b));
        assert_eq!(
            paths.into_iter().collect::<Vec<_>>(),
            ["parameter /nat/ip.Parameter.Value"]
        );
        let skip: BTreeSet<String> = ["parameter /nat/ip.Parameter.Value".to_owned()].into();
        let mut out = Vec::new();
        differences_but(
            &a["parameter /nat/ip"],
            &b["parameter /nat/ip"],
            "parameter /nat/ip",
            &skip,
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        differences(
            &a["parameter /nat/ip"],
            &b["parameter /nat/ip"],
            "parameter /nat/ip",
            &mut out,
        );
        assert_eq!(out.len(), 1, "{out:?}");
    }

    #[test]
    fn the_engines_own_parameters_are_not_in_an_inventory() {
        let answer = json!({"Parameters": [
            {"Name": "/refaws/shard/0"},
            {"Name": "/choudoufu/lock/reference-aws-stateful"},
            {"Name": "/choudoufu/records/reference-aws-stateful/0123456789abcdef0123456789abcdef"},
            {"Name": "/choudoufu/records/reference-aws-stateful/root.outputs"},
            {"Name": "/choudoufu-not-the-engine"},
            {"Name": "plain"}
        ]});
        assert_eq!(
            listed_parameters(&answer),
            ["/refaws/shard/0", "/choudoufu-not-the-engine", "plain"]
        );
        assert!(engine_parameter(&engine::record::ssm::path("e")));
    }

    #[test]
    fn the_record_store_reads_back_as_the_engine_wrote_it() {
        use engine::record::{ssm, Deposed, Record};
        let path = ssm::path("e");
        let small = Record {
            address: "aws_sns_topic_subscription.s".into(),
            type_name: "aws_sns_topic_subscription".into(),
            id: Some("arn:aws:sns:us-east-1:123456789012:t:1".into()),
            deposed: vec![Deposed {
                key: "0a0b0c0d".into(),
                id: "/old".into(),
            }],
            ..Record::default()
        };
        let mut large = Record {
            address: r#"module.m["k"].aws_iam_policy.p"#.into(),
            type_name: "aws_iam_policy".into(),
            ..Record::default()
        };
        large.args.insert("policy".into(), json!("x".repeat(9000)));
        let mut params = BTreeMap::new();
        for (r, gen) in [(&small, "00000000"), (&large, "11111111")] {
            let text = serde_json::to_string(r).unwrap();
            for (name, value) in ssm::encode(&ssm::key(&r.address), &text, gen) {
                params.insert(format!("{path}/{name}"), value);
            }
        }
        params.insert(format!("{path}/root.outputs"), "{}".into());
        // Another estate's store is not this one's.
        params.insert(
            format!("{}/{}", ssm::path("e2"), ssm::key("aws_sqs_queue.q")),
            "{}".into(),
        );
        let read = stored_records(&path, &params);
        assert_eq!(read.len(), 2);
        let by = |a: &str| read.iter().find(|r| r.address() == a).unwrap();
        let s = by("aws_sns_topic_subscription.s");
        assert_eq!(s.record, small);
        let head = format!("{path}/{}", ssm::key(&small.address));
        assert_eq!(s.parameters, [(head.clone(), params[&head].clone())]);
        let l = by(&large.address);
        assert_eq!(l.record, large);
        let head = format!("{path}/{}", ssm::key(&large.address));
        assert_eq!(l.parameters[0].0, head);
        assert_eq!(l.parameters.len(), 3, "{:?}", l.parameters);
        assert!(l.parameters[1..]
            .iter()
            .all(|(p, v)| p.starts_with(&format!("{head}-11111111-")) && &params[p] == v));
    }

    #[test]
    fn marker_tags_are_found_by_key() {
        let hits = marker_tags(
            "arn:q",
            &json!([{"Key": "app", "Value": "x"}, {"Key": "tofu-estate", "Value": "e"}]),
        );
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].value, "e");
    }
}
