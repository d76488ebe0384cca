//! Direct reads of the aws API, for the few listings the aws provider has
//! no data source for (a topic's subscriptions, the account's own IAM
//! policies, a role's attached policies): the query protocol over HTTPS,
//! signed with Signature Version 4, with the credentials, region and
//! endpoint the provider configuration names (IAM's global endpoint, and
//! its signing region, where it names none).
//!
//! Only listings: nothing here writes. A listing is named in the catalogue
//! (`under = { api = "sns.ListSubscriptionsByTopic", ... }`); [`LISTINGS`]
//! says where its answer's elements are.
//!
//! Credentials come, as the provider takes them, from its `access_key`,
//! `secret_key` and `token`, else the environment's `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, else the shared
//! credentials file's profile (`profile`, `AWS_PROFILE`, or `default`).
//! A configuration that assumes a role, or takes its credentials from
//! anywhere else, is not read here ([`ApiError::NoCredentials`]).

use crate::value::Value;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A query-protocol listing: its service, API version, and the path of the
/// elements of its answer.
struct ListingSpec {
    name: &'static str,
    service: &'static str,
    version: &'static str,
    /// The list: `<Action>Result/<members>/member`, or in EC2's dialect
    /// `<members>/item` under the answer's root.
    members: &'static str,
    /// The request's name of the next page's token (the answer's, but in
    /// EC2's dialect, where it starts in lower case).
    token: &'static str,
    ec2: bool,
}

/// The listings the catalogue may name.
const LISTINGS: &[ListingSpec] = &[
    ListingSpec {
        name: "ec2.DescribeDhcpOptions",
        service: "ec2",
        version: "2016-11-15",
        members: "dhcpOptionsSet",
        token: "NextToken",
        ec2: true,
    },
    ListingSpec {
        name: "ec2.DescribeVpcEndpoints",
        service: "ec2",
        version: "2016-11-15",
        members: "vpcEndpointSet",
        token: "NextToken",
        ec2: true,
    },
    ListingSpec {
        name: "iam.ListAttachedRolePolicies",
        service: "iam",
        version: "2010-05-08",
        members: "AttachedPolicies",
        token: "Marker",
        ec2: false,
    },
    ListingSpec {
        name: "iam.ListRolePolicies",
        service: "iam",
        version: "2010-05-08",
        members: "PolicyNames",
        token: "Marker",
        ec2: false,
    },
    ListingSpec {
        name: "iam.ListPolicies",
        service: "iam",
        version: "2010-05-08",
        members: "Policies",
        token: "Marker",
        ec2: false,
    },
    ListingSpec {
        name: "sns.ListSubscriptionsByTopic",
        service: "sns",
        version: "2010-03-31",
        members: "Subscriptions",
        token: "NextToken",
        ec2: false,
    },
];

/// IAM is global: one endpoint, and requests signed for us-east-1 (the
/// aws partition's).
const GLOBAL: &[(&str, &str, &str)] = &[("iam", "https://iam.amazonaws.com", "us-east-1")];

/// One element of a listing: its fields' text, by name.
pub type Element = BTreeMap<String, String>;

/// Whether the catalogue may name a listing.
pub fn is_listing(name: &str) -> bool {
    LISTINGS.iter().any(|l| l.name == name)
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("no credentials the engine can read directly (the provider configuration assumes a role, or takes them from elsewhere)")]
    NoCredentials,
    #[error("no region in the provider configuration")]
    NoRegion,
    #[error("{0} is not a listing the engine knows")]
    UnknownListing(String),
    #[error("{action} at {url}: {message}")]
    Http {
        action: String,
        url: String,
        message: String,
    },
    #[error("{action}: the answer is not the XML expected: {message}")]
    Answer { action: String, message: String },
    /// The object listed under is not there: a listing of nothing.
    #[error("{action}: {message}")]
    NotFound { action: String, message: String },
}

/// Access keys.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key: String,
    pub secret_key: String,
    pub token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key", &self.access_key)
            .finish_non_exhaustive()
    }
}

/// A client for one provider configuration.
#[derive(Debug, Clone)]
pub struct Client {
    credentials: Credentials,
    region: String,
    /// Endpoints by service, from the configuration's `endpoints` block.
    endpoints: BTreeMap<String, String>,
    /// One connection pool for every page of every listing.
    agent: ureq::Agent,
}

/// A configuration attribute's string, when set.
fn attr<'v>(config: &'v Value, name: &str) -> Option<&'v str> {
    config
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Client {
    /// The client a provider configuration (`config`, as its provider
    /// block gives it) implies; `region` is the provider's own answer when
    /// the configuration leaves it out.
    pub fn from_config(config: &Value, region: Option<String>) -> Result<Client, ApiError> {
        let has = |name: &str| {
            config
                .get(name)
                .and_then(Value::elements)
                .is_some_and(|e| !e.is_empty())
        };
        if has("assume_role") || has("assume_role_with_web_identity") {
            return Err(ApiError::NoCredentials);
        }
        let credentials = credentials(config)?;
        let region = attr(config, "region")
            .map(str::to_string)
            .or(region)
            .ok_or(ApiError::NoRegion)?;
        let mut endpoints = BTreeMap::new();
        for block in config
            .get("endpoints")
            .and_then(Value::elements)
            .unwrap_or_default()
        {
            let crate::value::Kind::Object(attrs) = &block.kind else {
                continue;
            };
            for (service, url) in attrs {
                if let Some(u) = url.as_str().filter(|u| !u.is_empty()) {
                    endpoints.insert(service.clone(), u.to_string());
                }
            }
        }
        Ok(Client {
            credentials,
            region,
            endpoints,
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(std::time::Duration::from_secs(60)))
                .build()
                .into(),
        })
    }

    /// The endpoint of a service: the configuration's, else
    /// `AWS_ENDPOINT_URL_<SERVICE>`, else `AWS_ENDPOINT_URL`, else aws's.
    fn endpoint(&self, service: &str) -> String {
        self.endpoints
            .get(service)
            .cloned()
            .or_else(|| env(&format!("AWS_ENDPOINT_URL_{}", service.to_uppercase())))
            .or_else(|| env("AWS_ENDPOINT_URL"))
            .unwrap_or_else(|| match GLOBAL.iter().find(|(s, ..)| *s == service) {
                Some((_, url, _)) => url.to_string(),
                None => format!("https://{service}.{}.amazonaws.com", self.region),
            })
    }

    /// The region a request to `service` is signed for.
    fn signing_region(&self, service: &str) -> &str {
        GLOBAL
            .iter()
            .find(|(s, ..)| *s == service)
            .map_or(self.region.as_str(), |(.., region)| region)
    }

    /// Every element a listing answers, each as its fields' text, over
    /// every page.
    pub fn list(
        &self,
        listing: &str,
        args: &BTreeMap<String, String>,
    ) -> Result<Vec<Element>, ApiError> {
        let spec = LISTINGS
            .iter()
            .find(|l| l.name == listing)
            .ok_or_else(|| ApiError::UnknownListing(listing.to_string()))?;
        let action = spec.name.split_once('.').map_or(spec.name, |(_, a)| a);
        let url = self.endpoint(spec.service);
        let mut out = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let mut params: Vec<(String, String)> = vec![
                ("Action".into(), action.into()),
                ("Version".into(), spec.version.into()),
            ];
            params.extend(args.iter().map(|(k, v)| (k.clone(), v.clone())));
            params.extend(next.take().map(|t| (spec.token.to_string(), t)));
            let body = form(&params);
            let answer = match self.post(&url, spec.service, action, &body) {
                Err(ApiError::NotFound { .. }) => return Ok(out),
                answer => answer?,
            };
            let (members, token) = members(&answer, action, spec)?;
            out.extend(members);
            match token {
                Some(t) => next = Some(t),
                None => return Ok(out),
            }
        }
    }

    fn post(&self, url: &str, service: &str, action: &str, body: &str) -> Result<String, ApiError> {
        let http = |message: String| ApiError::Http {
            action: action.to_string(),
            url: url.to_string(),
            message,
        };
        let host = host_of(url).ok_or_else(|| http("not an http(s) URL".into()))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs() as i64;
        let stamp = amz_date(now);
        let headers = sign(
            &self.credentials,
            &Signing {
                method: "POST",
                host: &host,
                path: "/",
                query: "",
                region: self.signing_region(service),
                service,
                stamp: &stamp,
                content_type: FORM,
                body: body.as_bytes(),
            },
        );
        let mut request = self.agent.post(url).header("content-type", FORM);
        for (name, value) in &headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut response = request.send(body).map_err(|e| http(e.to_string()))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| http(e.to_string()))?;
        if status != 200 {
            let said = error_text(&text);
            if is_not_found(&said) {
                return Err(ApiError::NotFound {
                    action: action.to_string(),
                    message: said,
                });
            }
            return Err(http(format!("HTTP {status}: {said}")));
        }
        Ok(text)
    }
}

const FORM: &str = "application/x-www-form-urlencoded; charset=utf-8";

/// The credentials a configuration names, else the environment's, else the
/// shared credentials file's profile.
fn credentials(config: &Value) -> Result<Credentials, ApiError> {
    if let (Some(a), Some(s)) = (attr(config, "access_key"), attr(config, "secret_key")) {
        return Ok(Credentials {
            access_key: a.into(),
            secret_key: s.into(),
            token: attr(config, "token").map(str::to_string),
        });
    }
    let profile = attr(config, "profile")
        .map(str::to_string)
        .or_else(|| env("AWS_PROFILE"));
    if profile.is_none() {
        if let (Some(a), Some(s)) = (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
            return Ok(Credentials {
                access_key: a,
                secret_key: s,
                token: env("AWS_SESSION_TOKEN"),
            });
        }
    }
    let profile = profile.unwrap_or_else(|| "default".into());
    let files: Vec<PathBuf> = match config
        .get("shared_credentials_files")
        .and_then(Value::elements)
    {
        Some(f) if !f.is_empty() => f
            .iter()
            .filter_map(|v| v.as_str().map(expand_home))
            .collect(),
        _ => env("AWS_SHARED_CREDENTIALS_FILE")
            .map(|f| expand_home(&f))
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".aws/credentials")))
            .into_iter()
            .collect(),
    };
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        if let Some(c) = profile_credentials(&text, &profile) {
            return Ok(c);
        }
    }
    Err(ApiError::NoCredentials)
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), env("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// A profile's keys in a shared credentials file (INI).
fn profile_credentials(text: &str, profile: &str) -> Option<Credentials> {
    let mut inside = false;
    let mut keys = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if inside {
                break;
            }
            inside = name.trim() == profile;
            continue;
        }
        if let (true, Some((k, v))) = (inside, line.split_once('=')) {
            keys.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    Some(Credentials {
        access_key: keys.remove("aws_access_key_id")?,
        secret_key: keys.remove("aws_secret_access_key")?,
        token: keys.remove("aws_session_token"),
    })
}

/// `host[:port]` of an http(s) URL.
fn host_of(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let host = rest.split(['/', '?']).next()?;
    (!host.is_empty()).then(|| host.to_string())
}

/// Parameters as a form body, in the order given.
fn form(params: &[(String, String)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-encoding as Signature Version 4 wants it: everything but
/// unreserved characters.
fn encode(s: &str) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(s, SET).to_string()
}

/// `20150830T123600Z` for a time in seconds since the epoch.
fn amz_date(secs: i64) -> String {
    crate::eval::funcs::rfc3339_utc(secs).replace(['-', ':'], "")
}

/// What a request signs.
struct Signing<'a> {
    method: &'a str,
    host: &'a str,
    path: &'a str,
    /// The canonical query string (sorted, encoded).
    query: &'a str,
    region: &'a str,
    service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    stamp: &'a str,
    content_type: &'a str,
    body: &'a [u8],
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The headers that sign a request with no query string: `x-amz-date`,
/// the session token when there is one, and `authorization`.
fn sign(c: &Credentials, r: &Signing<'_>) -> Vec<(String, String)> {
    let mut headers = vec![
        ("content-type".to_string(), r.content_type.to_string()),
        ("host".to_string(), r.host.to_string()),
        ("x-amz-date".to_string(), r.stamp.to_string()),
    ];
    if let Some(t) = &c.token {
        headers.push(("x-amz-security-token".to_string(), t.clone()));
    }
    let signed: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let canonical_headers: String = headers
        .iter()
        .map(|(k, v)| format!("{k}:{}\n", v.trim()))
        .collect();
    let canonical = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed}\n{}",
        r.method,
        r.path,
        r.query,
        hex(&Sha256::digest(r.body))
    );
    let date = &r.stamp[..8];
    let scope = format!("{date}/{}/{}/aws4_request", r.region, r.service);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        r.stamp,
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let mut key = hmac(format!("AWS4{}", c.secret_key).as_bytes(), date);
    for part in [r.region, r.service, "aws4_request"] {
        key = hmac(&key, part);
    }
    let signature = hex(&hmac(&key, &to_sign));
    let mut out: Vec<(String, String)> = headers
        .into_iter()
        .filter(|(k, _)| k != "content-type" && k != "host")
        .collect();
    out.push((
        "authorization".into(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
            c.access_key
        ),
    ));
    out
}

/// The elements of a listing's answer, each as its child elements' text,
/// and the next page's token.
type Page = (Vec<Element>, Option<String>);

fn members(xml: &str, action: &str, spec: &ListingSpec) -> Result<Page, ApiError> {
    let bad = |message: String| ApiError::Answer {
        action: action.to_string(),
        message,
    };
    let doc = roxmltree::Document::parse(xml).map_err(|e| bad(e.to_string()))?;
    let (result_name, member, token) = match spec.ec2 {
        true => (format!("{action}Response"), "item", lower_first(spec.token)),
        false => (format!("{action}Result"), "member", spec.token.to_string()),
    };
    let result = doc
        .descendants()
        .find(|n| n.has_tag_name(result_name.as_str()))
        .ok_or_else(|| bad(format!("no <{result_name}>")))?;
    let mut out = Vec::new();
    if let Some(l) = result.children().find(|n| n.has_tag_name(spec.members)) {
        for m in l.children().filter(|n| n.has_tag_name(member)) {
            let fields: Element = m
                .children()
                .filter(|c| c.is_element())
                .map(|c| {
                    (
                        c.tag_name().name().to_string(),
                        c.text().unwrap_or_default().to_string(),
                    )
                })
                .collect();
            // A list of names: each member is its text, as `member`.
            out.push(match fields.is_empty() {
                true => Element::from([("member".into(), m.text().unwrap_or_default().into())]),
                false => fields,
            });
        }
    }
    let token = result
        .children()
        .find(|n| n.has_tag_name(token.as_str()))
        .and_then(|n| n.text())
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    Ok((out, token))
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}

/// An error answer's code and message, else its text.
/// Whether an error's `Code: Message` says the object asked about is not
/// there (SNS's `NotFound`, IAM's `NoSuchEntity`, EC2's
/// `Invalid…ID.NotFound`).
fn is_not_found(said: &str) -> bool {
    let code = said.split(':').next().unwrap_or_default();
    code.ends_with("NotFound") || code == "NoSuchEntity"
}

fn error_text(xml: &str) -> String {
    let Ok(doc) = roxmltree::Document::parse(xml) else {
        return xml.chars().take(300).collect();
    };
    let field = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name(name))
            .and_then(|n| n.text())
            .map(str::to_string)
    };
    match (field("Code"), field("Message")) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c,
        _ => xml.chars().take(300).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signing example of aws's Signature Version 4 documentation
    /// (IAM ListUsers, 2015-08-30): its signing key and its signature.
    #[test]
    fn signatures_match_the_documented_example() {
        let c = Credentials {
            access_key: "AKIDEXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            token: None,
        };
        let mut key = hmac(b"AWS4wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830");
        for part in ["us-east-1", "iam", "aws4_request"] {
            key = hmac(&key, part);
        }
        assert_eq!(
            hex(&key),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"
        );
        let r = Signing {
            method: "GET",
            host: "iam.amazonaws.com",
            path: "/",
            query: "Action=ListUsers&Version=2010-05-08",
            region: "us-east-1",
            service: "iam",
            stamp: "20150830T123600Z",
            content_type: FORM,
            body: b"",
        };
        let headers = sign(&c, &r);
        let auth = &headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .unwrap()
            .1;
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
        let with_token = sign(
            &Credentials {
                token: Some("T".into()),
                ..c
            },
            &r,
        );
        assert!(with_token
            .iter()
            .any(|(k, v)| k == "x-amz-security-token" && v == "T"));
        assert_eq!(amz_date(1_440_938_160), "20150830T123600Z");
    }

    #[test]
    fn listings_are_read_with_their_next_token() {
        let xml = r#"<ListSubscriptionsByTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">
  <ListSubscriptionsByTopicResult>
    <Subscriptions>
      <member><TopicArn>arn:aws:sns:us-east-1:1:t</TopicArn><Protocol>sqs</Protocol><SubscriptionArn>arn:aws:sns:us-east-1:1:t:u1</SubscriptionArn><Owner>1</Owner><Endpoint>arn:aws:sqs:us-east-1:1:q</Endpoint></member>
    </Subscriptions>
    <NextToken>n2</NextToken>
  </ListSubscriptionsByTopicResult>
</ListSubscriptionsByTopicResponse>"#;
        let sns = spec("sns.ListSubscriptionsByTopic");
        let (m, next) = members(xml, "ListSubscriptionsByTopic", sns).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0]["Protocol"], "sqs");
        assert_eq!(m[0]["SubscriptionArn"], "arn:aws:sns:us-east-1:1:t:u1");
        assert_eq!(next.as_deref(), Some("n2"));
        assert!(members("<x/>", "ListSubscriptionsByTopic", sns).is_err());
        let e = "<ErrorResponse><Error><Code>NotFound</Code><Message>Topic does not exist</Message></Error></ErrorResponse>";
        assert_eq!(error_text(e), "NotFound: Topic does not exist");
        assert!(is_not_found(&error_text(e)));
        assert!(is_not_found("NoSuchEntity: The role cannot be found."));
        assert!(is_not_found("InvalidVpcId.NotFound: no such VPC"));
        assert!(!is_not_found("AccessDenied: not allowed to NotFound"));
        assert!(!is_not_found("Throttling: Rate exceeded"));
    }

    #[test]
    fn iam_listings_page_by_marker() {
        let page = |marker: &str| {
            format!(
                r#"<ListPoliciesResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/">
  <ListPoliciesResult>
    <IsTruncated>{}</IsTruncated>
    {marker}
    <Policies>
      <member><PolicyName>p</PolicyName><Arn>arn:aws:iam::1:policy/p</Arn><Path>/</Path></member>
    </Policies>
  </ListPoliciesResult>
</ListPoliciesResponse>"#,
                !marker.is_empty()
            )
        };
        let policies = spec("iam.ListPolicies");
        let (m, next) = members(&page("<Marker>m2</Marker>"), "ListPolicies", policies).unwrap();
        assert_eq!(m[0]["Arn"], "arn:aws:iam::1:policy/p");
        assert_eq!(next.as_deref(), Some("m2"));
        let (_, last) = members(&page(""), "ListPolicies", policies).unwrap();
        assert_eq!(last, None);
        let names = r#"<ListRolePoliciesResponse><ListRolePoliciesResult>
  <PolicyNames><member>a</member><member>b</member></PolicyNames>
  <IsTruncated>false</IsTruncated>
</ListRolePoliciesResult></ListRolePoliciesResponse>"#;
        let inline = spec("iam.ListRolePolicies");
        let (m, _) = members(names, "ListRolePolicies", inline).unwrap();
        assert_eq!(m[1]["member"], "b");
    }

    #[test]
    fn ec2_listings_are_items_under_the_answer() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<DescribeVpcEndpointsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>r</requestId>
  <vpcEndpointSet>
    <item><vpcEndpointId>vpce-1</vpcEndpointId><vpcId>vpc-1</vpcId><tagSet><item><key>k</key><value>v</value></item></tagSet></item>
  </vpcEndpointSet>
  <nextToken>t2</nextToken>
</DescribeVpcEndpointsResponse>"#;
        let endpoints = spec("ec2.DescribeVpcEndpoints");
        let (m, next) = members(xml, "DescribeVpcEndpoints", endpoints).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0]["vpcEndpointId"], "vpce-1");
        assert_eq!(next.as_deref(), Some("t2"));
    }

    fn spec(name: &str) -> &'static ListingSpec {
        LISTINGS.iter().find(|l| l.name == name).unwrap()
    }

    #[test]
    fn iam_is_reached_and_signed_as_a_global_service() {
        let client = Client {
            credentials: Credentials {
                access_key: "A".into(),
                secret_key: "S".into(),
                token: None,
            },
            region: "eu-west-1".into(),
            endpoints: BTreeMap::new(),
            agent: ureq::Agent::new_with_defaults(),
        };
        assert_eq!(client.signing_region("iam"), "us-east-1");
        assert_eq!(client.signing_region("sns"), "eu-west-1");
        if std::env::var_os("AWS_ENDPOINT_URL").is_none()
            && std::env::var_os("AWS_ENDPOINT_URL_IAM").is_none()
        {
            assert_eq!(client.endpoint("iam"), "https://iam.amazonaws.com");
        }
    }

    #[test]
    fn credentials_come_from_a_profile_of_the_shared_file() {
        let text = "[default]\naws_access_key_id = A\naws_secret_access_key = S\n\n[ops]\n# ops\naws_access_key_id=B\naws_secret_access_key=T\naws_session_token=X\n";
        assert_eq!(
            profile_credentials(text, "default").unwrap().access_key,
            "A"
        );
        let ops = profile_credentials(text, "ops").unwrap();
        assert_eq!(
            (ops.secret_key.as_str(), ops.token.as_deref()),
            ("T", Some("X"))
        );
        assert!(profile_credentials(text, "none").is_none());
        assert_eq!(
            host_of("http://127.0.0.1:5000/x").as_deref(),
            Some("127.0.0.1:5000")
        );
        assert_eq!(encode("arn:aws:sns:x/y z"), "arn%3Aaws%3Asns%3Ax%2Fy%20z");
    }
}
