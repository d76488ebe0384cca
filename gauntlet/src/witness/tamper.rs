//! The witness's writes: what the running system does to the twins out
//! of band (objects it makes, messages it sends, tags it sets) and the
//! stages' tampering, kept apart from the reads every verdict rests on.

use super::{StoredRecord, Witness, WitnessError};
use serde_json::Value;
use std::fs;

/// How many names one `ssm delete-parameters` call takes at most.
const DELETE_AT_ONCE: usize = 10;

impl Witness {
    pub fn create_bucket(&self, name: &str) -> Result<(), WitnessError> {
        self.call(&["s3api", "create-bucket", "--bucket", name])
            .map(drop)
    }

    pub fn create_queue(&self, name: &str) -> Result<(), WitnessError> {
        self.call(&["sqs", "create-queue", "--queue-name", name])
            .map(drop)
    }

    pub fn delete_queue(&self, name: &str) -> Result<(), WitnessError> {
        let url = self.queue_url_required(name)?;
        self.call(&["sqs", "delete-queue", "--queue-url", &url])
            .map(drop)
    }

    pub fn create_role(&self, name: &str) -> Result<(), WitnessError> {
        let doc = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
        self.call(&[
            "iam",
            "create-role",
            "--role-name",
            name,
            "--assume-role-policy-document",
            doc,
        ])
        .map(drop)
    }

    pub fn put_object(&self, bucket: &str, key: &str, body: &str) -> Result<(), WitnessError> {
        let file = self.home.join("object-body");
        fs::write(&file, body).map_err(|source| WitnessError::Io {
            path: file.clone(),
            source,
        })?;
        let file = file.display().to_string();
        self.call(&[
            "s3api",
            "put-object",
            "--bucket",
            bucket,
            "--key",
            key,
            "--body",
            &file,
        ])
        .map(drop)
    }

    /// Deletes an object. In a versioned bucket this writes a delete marker,
    /// whose version is returned so that [`Witness::delete_version`] can put
    /// the object back exactly as it was.
    pub fn delete_object(&self, bucket: &str, key: &str) -> Result<Option<String>, WitnessError> {
        let v = self.call(&["s3api", "delete-object", "--bucket", bucket, "--key", key])?;
        Ok(match (&v["DeleteMarker"], &v["VersionId"]) {
            (Value::Bool(true), Value::String(id)) => Some(id.clone()),
            _ => None,
        })
    }

    /// Deletes one version of an object for good; deleting a delete marker
    /// brings back the version under it.
    pub fn delete_version(
        &self,
        bucket: &str,
        key: &str,
        version: &str,
    ) -> Result<(), WitnessError> {
        self.call(&[
            "s3api",
            "delete-object",
            "--bucket",
            bucket,
            "--key",
            key,
            "--version-id",
            version,
        ])
        .map(drop)
    }

    pub fn send_message(&self, queue: &str, body: &str) -> Result<(), WitnessError> {
        let url = self.queue_url_required(queue)?;
        self.call(&[
            "sqs",
            "send-message",
            "--queue-url",
            &url,
            "--message-body",
            body,
        ])
        .map(drop)
    }

    /// Add a TCP ingress rule on `port` from `cidr` to the security group
    /// named `group`.
    pub fn add_ingress_rule(
        &self,
        group: &str,
        cidr: &str,
        port: u16,
        description: &str,
    ) -> Result<(), WitnessError> {
        let id = self
            .security_group_id(group)?
            .ok_or_else(|| WitnessError::Call {
                side: self.side,
                args: format!(
                    "ec2 describe-security-groups --filters Name=group-name,Values={group}"
                ),
                stderr: format!("no security group named {group}"),
            })?;
        let permissions = serde_json::json!([{
            "IpProtocol": "tcp",
            "FromPort": port,
            "ToPort": port,
            "IpRanges": [{ "CidrIp": cidr, "Description": description }],
        }])
        .to_string();
        self.call(&[
            "ec2",
            "authorize-security-group-ingress",
            "--group-id",
            &id,
            "--ip-permissions",
            &permissions,
        ])
        .map(drop)
    }

    /// Remove the TCP ingress rule on `port` from `cidr` from the security
    /// group named `group`, if it is there.
    pub fn remove_ingress_rule(
        &self,
        group: &str,
        cidr: &str,
        port: u16,
    ) -> Result<(), WitnessError> {
        let Some(id) = self.security_group_id(group)? else {
            return Ok(());
        };
        let Some(rule) = self.ingress_rule_of(&id, cidr, port)? else {
            return Ok(());
        };
        self.call(&[
            "ec2",
            "revoke-security-group-ingress",
            "--group-id",
            &id,
            "--security-group-rule-ids",
            &rule,
        ])
        .map(drop)
    }

    pub fn tag_queue(&self, queue: &str, key: &str, value: &str) -> Result<(), WitnessError> {
        let url = self.queue_url_required(queue)?;
        let tag = serde_json::json!({ key: value }).to_string();
        self.call(&["sqs", "tag-queue", "--queue-url", &url, "--tags", &tag])
            .map(drop)
    }

    /// Set one tag on any object the tagging API can tag, by its ARN.
    pub fn tag_object(&self, arn: &str, key: &str, value: &str) -> Result<(), WitnessError> {
        let v = self.call(&[
            "resourcegroupstaggingapi",
            "tag-resources",
            "--resource-arn-list",
            arn,
            "--tags",
            // JSON, not the shorthand: an address marker holds brackets.
            &serde_json::json!({ key: value }).to_string(),
        ])?;
        match v["FailedResourcesMap"].as_object() {
            Some(failed) if !failed.is_empty() => Err(WitnessError::Call {
                side: self.side,
                args: format!("resourcegroupstaggingapi tag-resources --resource-arn-list {arn}"),
                stderr: Value::Object(failed.clone()).to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// Remove one tag from any object the tagging API can tag, by its ARN.
    pub fn untag_object(&self, arn: &str, key: &str) -> Result<(), WitnessError> {
        self.call(&[
            "resourcegroupstaggingapi",
            "untag-resources",
            "--resource-arn-list",
            arn,
            "--tag-keys",
            key,
        ])
        .map(drop)
    }

    pub fn tag_table(&self, table: &str, key: &str, value: &str) -> Result<(), WitnessError> {
        let arn = self.table_arn(table)?;
        let tags = serde_json::json!([{ "Key": key, "Value": value }]).to_string();
        self.call(&[
            "dynamodb",
            "tag-resource",
            "--resource-arn",
            &arn,
            "--tags",
            &tags,
        ])
        .map(drop)
    }

    pub fn untag_table(&self, table: &str, key: &str) -> Result<(), WitnessError> {
        let arn = self.table_arn(table)?;
        self.call(&[
            "dynamodb",
            "untag-resource",
            "--resource-arn",
            &arn,
            "--tag-keys",
            key,
        ])
        .map(drop)
    }

    pub fn delete_parameter(&self, name: &str) -> Result<(), WitnessError> {
        self.call(&["ssm", "delete-parameter", "--name", name])
            .map(drop)
    }

    /// Delete parameters by name, a few names a call; a name already gone
    /// is deleted.
    pub fn delete_parameters(&self, names: &[String]) -> Result<(), WitnessError> {
        for chunk in names.chunks(DELETE_AT_ONCE) {
            let mut args = vec!["ssm", "delete-parameters", "--names"];
            args.extend(chunk.iter().map(String::as_str));
            self.call(&args)?;
        }
        Ok(())
    }

    /// Take a record out of the engine's store in the live system: its
    /// parameters deleted, the head in the first call (so the store never
    /// holds a head whose parts are gone). The record keeps what puts
    /// them back.
    pub fn take_record(&self, record: &StoredRecord) -> Result<(), WitnessError> {
        let names: Vec<String> = record.parameters.iter().map(|(n, _)| n.clone()).collect();
        self.delete_parameters(&names)
    }

    /// Put a record taken by [`Witness::take_record`] back as it was: the
    /// parts first and the head last, as the engine writes a record, each
    /// a String parameter without tags, as the engine writes them.
    pub fn put_back(&self, record: &StoredRecord) -> Result<(), WitnessError> {
        for (name, value) in record.parameters.iter().rev() {
            // The whole request as JSON: a value is the record's text as
            // it is, which the CLI would otherwise read as an option (a
            // leading dash) or as a file or URL to fetch.
            let input = serde_json::json!({ "Name": name, "Value": value, "Type": "String" });
            self.call(&[
                "ssm",
                "put-parameter",
                "--cli-input-json",
                &input.to_string(),
            ])?;
        }
        Ok(())
    }
}

/// An object a BREAK toggle tampers with by its tags: a queue a manifest
/// names, or any object by ARN through the tagging API (a root's, or an
/// estate's with no knob for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handle {
    Queue(String),
    Object(String),
}

impl std::fmt::Display for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Handle::Queue(q) => write!(f, "the queue {q}"),
            Handle::Object(arn) => write!(f, "{arn}"),
        }
    }
}

impl Handle {
    /// Set `key` to `value` on the object, or take it off with `None`.
    pub fn set_tag(&self, w: &Witness, key: &str, value: Option<&str>) -> Result<(), WitnessError> {
        match (self, value) {
            (Handle::Queue(q), Some(v)) => w.tag_queue(q, key, v),
            (Handle::Queue(q), None) => w.untag_queue(q, key),
            (Handle::Object(arn), Some(v)) => w.tag_object(arn, key, v),
            (Handle::Object(arn), None) => w.untag_object(arn, key),
        }
    }

    /// The object's tags; `None` when it is gone.
    pub fn tags(
        &self,
        w: &Witness,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, WitnessError> {
        match self {
            Handle::Queue(q) => w.queue_tags(q),
            Handle::Object(arn) => w.object_tags(arn),
        }
    }
}
