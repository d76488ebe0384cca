//! Identity rows: for each supported resource type, how the live object of
//! a declared instance is found from its configuration alone, how its
//! ownership is marked, and what of it cannot be read back.
//!
//! A type without a row is refused, never guessed.

use crate::value::Value;

/// How the import ID of a declared instance is found.
#[derive(Debug, Clone, Copy)]
pub enum Locate {
    /// The import ID is one attribute of the configuration.
    Attr(&'static str),
    /// The import ID is attributes joined by a separator.
    Joined(&'static [&'static str], &'static str),
    /// A data source finds it: the data source type, its arguments taken
    /// from configuration attributes (data source argument, configuration
    /// attribute), and the result attribute that is the import ID.
    Lookup {
        data_source: &'static str,
        args: &'static [(&'static str, &'static str)],
        id: &'static str,
    },
    /// The import ID is built from a template: `{account}` and `{region}`
    /// are the provider's, `{attr}` a configuration attribute, and `{path}`
    /// the `path` attribute or `/`.
    Template(&'static str),
    /// Nothing in the configuration names the object (a generated ID):
    /// only the record store knows it.
    Record,
}

/// How an object's ownership is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marks {
    /// The marker is written into the object's `tags`.
    Tags,
    /// The type carries no tags: it is a part of a parent object, named by
    /// the configuration attribute `attr` (a bucket, a queue URL, a topic
    /// ARN, a role name) and of type `of`. The estate owns it when it owns
    /// the parent (its marker), or when its own record names the part: a
    /// part of another estate's object.
    Parent {
        attr: &'static str,
        of: &'static str,
    },
}

/// How a swept object, known by its ARN, is found again for a destroy.
#[derive(Debug, Clone, Copy)]
pub enum FromArn {
    /// The import ID is the ARN itself.
    Arn,
    /// The import ID is the ARN's resource part after this prefix
    /// (`table/`, `role/`, `parameter`), or after the last `:` if empty.
    Name(&'static str),
    /// The ARN's name is an argument of a lookup data source (as in
    /// [`Locate::Lookup`]), whose result attribute is the import ID.
    Lookup {
        data_source: &'static str,
        arg: &'static str,
        id: &'static str,
    },
}

/// One supported resource type.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub type_name: &'static str,
    pub locate: Locate,
    pub marks: Marks,
    /// Arguments the provider cannot read back from the live object
    /// (import leaves them at their defaults); the record store keeps them.
    pub config_only: &'static [&'static str],
    /// For a type the sweep can list: how its ARN leads back to it.
    pub from_arn: Option<FromArn>,
    /// The service part of the type's ARNs (`arn:aws:<service>:...`).
    pub arn_service: &'static str,
    /// A read that means "not there" although the provider returned an
    /// object (a setting of its parent that was never made).
    pub absent_if: Option<fn(&Value) -> bool>,
}

/// Bucket versioning reads back "Disabled" for a bucket where it was never
/// configured: that is no versioning object.
fn versioning_never_set(v: &Value) -> bool {
    let status = v
        .get("versioning_configuration")
        .and_then(Value::elements)
        .and_then(|e| {
            e.first()
                .and_then(|c| c.get("status"))
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    matches!(status.as_deref(), None | Some("") | Some("Disabled"))
}

const ROWS: &[Row] = &[
    Row {
        type_name: "aws_s3_bucket",
        locate: Locate::Attr("bucket"),
        marks: Marks::Tags,
        config_only: &["force_destroy"],
        from_arn: Some(FromArn::Name(":::")),
        arn_service: "s3",
        absent_if: None,
    },
    Row {
        type_name: "aws_s3_bucket_versioning",
        locate: Locate::Attr("bucket"),
        marks: Marks::Parent {
            attr: "bucket",
            of: "aws_s3_bucket",
        },
        config_only: &[],
        from_arn: None,
        arn_service: "s3",
        absent_if: Some(versioning_never_set),
    },
    Row {
        type_name: "aws_s3_bucket_policy",
        locate: Locate::Attr("bucket"),
        marks: Marks::Parent {
            attr: "bucket",
            of: "aws_s3_bucket",
        },
        config_only: &[],
        from_arn: None,
        arn_service: "s3",
        absent_if: None,
    },
    Row {
        type_name: "aws_sqs_queue",
        locate: Locate::Lookup {
            data_source: "aws_sqs_queue",
            args: &[("name", "name")],
            id: "url",
        },
        marks: Marks::Tags,
        config_only: &[],
        from_arn: Some(FromArn::Lookup {
            data_source: "aws_sqs_queue",
            arg: "name",
            id: "url",
        }),
        arn_service: "sqs",
        absent_if: None,
    },
    Row {
        type_name: "aws_sqs_queue_policy",
        locate: Locate::Attr("queue_url"),
        marks: Marks::Parent {
            attr: "queue_url",
            of: "aws_sqs_queue",
        },
        config_only: &[],
        from_arn: None,
        arn_service: "sqs",
        absent_if: None,
    },
    Row {
        type_name: "aws_sqs_queue_redrive_policy",
        locate: Locate::Attr("queue_url"),
        marks: Marks::Parent {
            attr: "queue_url",
            of: "aws_sqs_queue",
        },
        config_only: &[],
        from_arn: None,
        arn_service: "sqs",
        absent_if: None,
    },
    Row {
        type_name: "aws_sns_topic",
        locate: Locate::Lookup {
            data_source: "aws_sns_topic",
            args: &[("name", "name")],
            id: "arn",
        },
        marks: Marks::Tags,
        config_only: &[],
        from_arn: Some(FromArn::Arn),
        arn_service: "sns",
        absent_if: None,
    },
    Row {
        type_name: "aws_sns_topic_subscription",
        locate: Locate::Record,
        marks: Marks::Parent {
            attr: "topic_arn",
            of: "aws_sns_topic",
        },
        config_only: &["confirmation_timeout_in_minutes", "endpoint_auto_confirms"],
        from_arn: None,
        arn_service: "sns",
        absent_if: None,
    },
    Row {
        type_name: "aws_iam_role",
        locate: Locate::Attr("name"),
        marks: Marks::Tags,
        config_only: &["force_detach_policies"],
        from_arn: Some(FromArn::Name("role/")),
        arn_service: "iam",
        absent_if: None,
    },
    Row {
        type_name: "aws_iam_policy",
        // Looking the policy up by name retries for two minutes when it is
        // absent (IAM's eventual consistency); its ARN is known up front.
        locate: Locate::Template("arn:aws:iam::{account}:policy{path}{name}"),
        marks: Marks::Tags,
        config_only: &[],
        from_arn: Some(FromArn::Arn),
        arn_service: "iam",
        absent_if: None,
    },
    Row {
        type_name: "aws_iam_role_policy_attachment",
        locate: Locate::Joined(&["role", "policy_arn"], "/"),
        marks: Marks::Parent {
            attr: "role",
            of: "aws_iam_role",
        },
        config_only: &[],
        from_arn: None,
        arn_service: "iam",
        absent_if: None,
    },
    Row {
        // An inline policy carries no tags: it is owned through the role
        // it is embedded in, and dies with it. Its name is unique only
        // within that role, so the import ID joins the two.
        type_name: "aws_iam_role_policy",
        locate: Locate::Joined(&["role", "name"], ":"),
        marks: Marks::Parent {
            attr: "role",
            of: "aws_iam_role",
        },
        config_only: &[],
        from_arn: None,
        arn_service: "iam",
        absent_if: None,
    },
    Row {
        type_name: "aws_dynamodb_table",
        locate: Locate::Attr("name"),
        marks: Marks::Tags,
        config_only: &[],
        from_arn: Some(FromArn::Name("table/")),
        arn_service: "dynamodb",
        absent_if: None,
    },
    Row {
        // One tag of a table, written apart from the table's block: a part
        // of another estate's table, usually.
        type_name: "aws_dynamodb_tag",
        locate: Locate::Joined(&["resource_arn", "key"], ","),
        marks: Marks::Parent {
            attr: "resource_arn",
            of: "aws_dynamodb_table",
        },
        config_only: &[],
        from_arn: None,
        arn_service: "dynamodb",
        absent_if: None,
    },
    Row {
        type_name: "aws_ssm_parameter",
        locate: Locate::Attr("name"),
        marks: Marks::Tags,
        config_only: &["overwrite"],
        from_arn: Some(FromArn::Name("parameter")),
        arn_service: "ssm",
        absent_if: None,
    },
];

impl Row {
    /// The import ID of an object from its state: what finds it again.
    pub fn import_id(&self, state: &Value) -> Option<String> {
        let text = |a: &str| state.get(a).and_then(Value::as_str).map(str::to_string);
        match self.locate {
            Locate::Attr(a) => text(a),
            Locate::Joined(attrs, sep) => attrs
                .iter()
                .map(|a| text(a))
                .collect::<Option<Vec<_>>>()
                .map(|p| p.join(sep)),
            Locate::Lookup { id, .. } => text(id),
            Locate::Template(_) | Locate::Record => text("id"),
        }
    }
}

/// The row for a resource type, if it has one.
pub fn row(type_name: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.type_name == type_name)
}

/// Every supported type, for messages.
pub fn supported() -> impl Iterator<Item = &'static str> {
    ROWS.iter().map(|r| r.type_name)
}

/// The row whose ARNs a swept ARN belongs to, by service and resource
/// part: `arn:aws:sqs:us-east-1:123:q` is a queue, `arn:aws:iam::123:role/r`
/// a role.
pub fn row_for_arn(arn: &str) -> Option<&'static Row> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [_, _, service, _, _, resource] = parts.as_slice() else {
        return None;
    };
    ROWS.iter().find(|r| {
        r.arn_service == *service
            && match r.from_arn {
                Some(FromArn::Name(prefix)) if prefix.ends_with('/') => {
                    resource.starts_with(prefix)
                }
                Some(FromArn::Name("parameter")) => resource.starts_with("parameter/"),
                Some(FromArn::Name(_)) => true,
                Some(FromArn::Arn) if service == &"iam" => resource.starts_with("policy/"),
                Some(FromArn::Arn | FromArn::Lookup { .. }) => true,
                None => false,
            }
    })
}

/// The name an ARN gives an object (`q`, `r`, `/app/p`, `bucket`).
pub fn name_in_arn(row: &Row, arn: &str) -> String {
    match row.from_arn {
        Some(FromArn::Name(":::")) => arn.rsplit(":::").next().unwrap_or(arn).to_string(),
        Some(FromArn::Name("parameter")) => {
            let rest = arn.split_once(":parameter").map_or(arn, |(_, r)| r);
            if rest.starts_with('/') {
                rest.to_string()
            } else {
                format!("/{rest}")
            }
        }
        Some(FromArn::Name(prefix)) => arn
            .split_once(prefix)
            .map_or(arn, |(_, r)| r)
            .rsplit('/')
            .next()
            .unwrap_or(arn)
            .to_string(),
        _ => arn.rsplit([':', '/']).next().unwrap_or(arn).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arns_lead_back_to_their_types_and_names() {
        let cases = [
            (
                "arn:aws:sqs:us-east-1:123456789012:refaws-jobs",
                "aws_sqs_queue",
                "refaws-jobs",
            ),
            (
                "arn:aws:s3:::refaws-artifacts",
                "aws_s3_bucket",
                "refaws-artifacts",
            ),
            (
                "arn:aws:iam::123456789012:role/refaws-worker",
                "aws_iam_role",
                "refaws-worker",
            ),
            (
                "arn:aws:iam::123456789012:policy/refaws-worker",
                "aws_iam_policy",
                "refaws-worker",
            ),
            (
                "arn:aws:dynamodb:us-east-1:123456789012:table/refaws-state",
                "aws_dynamodb_table",
                "refaws-state",
            ),
            (
                "arn:aws:ssm:us-east-1:123456789012:parameter/refaws/shard/0",
                "aws_ssm_parameter",
                "/refaws/shard/0",
            ),
            (
                "arn:aws:sns:us-east-1:123456789012:refaws-events",
                "aws_sns_topic",
                "refaws-events",
            ),
        ];
        for (arn, ty, name) in cases {
            let row = row_for_arn(arn).unwrap_or_else(|| panic!("{arn}"));
            assert_eq!(row.type_name, ty, "{arn}");
            assert_eq!(name_in_arn(row, arn), name, "{arn}");
        }
        assert!(row("aws_lambda_function").is_none());
    }

    #[test]
    fn an_inline_role_policy_is_found_through_its_role() {
        let r = row("aws_iam_role_policy").unwrap();
        assert_eq!(
            r.marks,
            Marks::Parent {
                attr: "role",
                of: "aws_iam_role"
            }
        );
        let state = Value::object(
            [
                ("role", "platform-api"),
                ("name", "platform-api-own"),
                ("id", "platform-api:platform-api-own"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::string(v)))
            .collect(),
        );
        assert_eq!(
            r.import_id(&state).as_deref(),
            Some("platform-api:platform-api-own")
        );
        // It has no ARN of its own: a role's ARN is the role's.
        let role = row_for_arn("arn:aws:iam::123456789012:role/platform-api").unwrap();
        assert_eq!(role.type_name, "aws_iam_role");
    }
}
