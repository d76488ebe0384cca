//! A provider plugin that speaks protocol 6 over real gRPC, for the
//! engine's tests (there is no protocol 6 provider binary to test with).
//!
//! It does what a go-plugin server does when a host starts it: checks the
//! magic cookie, listens on a unix socket in `PLUGIN_UNIX_SOCKET_DIR`,
//! prints the handshake line `1|6|unix|<socket>|grpc|`, and serves the
//! provider beside go-plugin's controller (whose Shutdown ends it). It
//! serves plaintext only: the host must not ask for AutoMTLS.
//!
//! Its one resource type, `fake_server`, has nested attributes of every
//! nesting mode and a write-only `password`; plan fills in computed
//! values as unknown and apply makes them known; it plans the password
//! of a server named `leaky`, which a provider must not. Values are read and
//! written with rmpv directly, not with the engine's codec, so the tests
//! check the engine against an independent reading of the wire format.
//! An apply of a server with `hang = true` waits until StopProvider.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use rmpv::Value as Mp;
use tokio::net::UnixListener;
use tokio::sync::Notify;
use tonic::codegen::tokio_stream::wrappers::UnixListenerStream;
use tonic::codegen::{http, BoxFuture, Service};
use tonic::{Request, Response, Status};

#[allow(clippy::all, dead_code)]
mod pb {
    include!(concat!(env!("OUT_DIR"), "/fake_server/tfplugin6.rs"));
}

#[allow(clippy::all, dead_code)]
mod goplugin {
    include!(concat!(env!("OUT_DIR"), "/fake_server/plugin.rs"));
}

use pb::provider_server::{Provider, ProviderServer};
use pb::schema::{object::NestingMode as ObjectNesting, Attribute, Block, Object};

const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
const MAGIC_COOKIE_VALUE: &str = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::var(MAGIC_COOKIE_KEY).as_deref() != Ok(MAGIC_COOKIE_VALUE) {
        eprintln!("This binary is a plugin. It is not meant to be executed directly.");
        std::process::exit(1);
    }
    if std::env::var_os("PLUGIN_CLIENT_CERT").is_some_and(|c| !c.is_empty()) {
        eprintln!("fake_provider6 serves plaintext only; start it without AutoMTLS");
        std::process::exit(1);
    }
    let offered = std::env::var("PLUGIN_PROTOCOL_VERSIONS").unwrap_or_default();
    if !offered.split(',').any(|v| v.trim() == "6") {
        eprintln!("fake_provider6 speaks protocol 6 only; offered {offered:?}");
        std::process::exit(1);
    }
    let dir = std::env::var_os("PLUGIN_UNIX_SOCKET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let socket = dir.join(format!("fake-provider6-{}", std::process::id()));
    let listener = UnixListener::bind(&socket).expect("bind the plugin socket");
    println!("1|6|unix|{}|grpc|", socket.display());

    let shutdown = Arc::new(Notify::new());
    let routes = Routes {
        provider: ProviderServer::new(FakeProvider::default()),
        controller: goplugin::grpc_controller_server::GrpcControllerServer::new(Controller {
            shutdown: shutdown.clone(),
        }),
    };
    let stopped = shutdown.notified();
    tonic::transport::Server::builder()
        .serve_with_incoming_shutdown(routes, UnixListenerStream::new(listener), stopped)
        .await
        .expect("serve");
    let _ = std::fs::remove_file(&socket);
}

/// The provider and go-plugin's controller on one server, routed by the
/// service name in the request path.
#[derive(Clone)]
struct Routes {
    provider: ProviderServer<FakeProvider>,
    controller: goplugin::grpc_controller_server::GrpcControllerServer<Controller>,
}

impl Service<http::Request<tonic::body::Body>> for Routes {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        if request.uri().path().starts_with("/plugin.GRPCController/") {
            Box::pin(self.controller.call(request))
        } else {
            Box::pin(self.provider.call(request))
        }
    }
}

struct Controller {
    shutdown: Arc<Notify>,
}

#[tonic::async_trait]
impl goplugin::grpc_controller_server::GrpcController for Controller {
    async fn shutdown(
        &self,
        _: Request<goplugin::Empty>,
    ) -> Result<Response<goplugin::Empty>, Status> {
        self.shutdown.notify_one();
        Ok(Response::new(goplugin::Empty {}))
    }
}

#[derive(Default)]
struct FakeProvider {
    /// Woken by StopProvider.
    stop: Arc<Notify>,
}

fn attribute(name: &str, ty: &str, flags: &str) -> Attribute {
    Attribute {
        name: name.into(),
        r#type: ty.as_bytes().to_vec(),
        required: flags.contains("required"),
        optional: flags.contains("optional"),
        computed: flags.contains("computed"),
        sensitive: flags.contains("sensitive"),
        write_only: flags.contains("write_only"),
        ..Attribute::default()
    }
}

fn nested(
    name: &str,
    nesting: ObjectNesting,
    flags: &str,
    attributes: Vec<Attribute>,
) -> Attribute {
    Attribute {
        nested_type: Some(Object {
            attributes,
            nesting: nesting as i32,
        }),
        r#type: Vec::new(),
        ..attribute(name, "", flags)
    }
}

/// `fake_server`: see the module documentation.
fn server_block() -> Block {
    Block {
        attributes: vec![
            attribute("id", "\"string\"", "computed"),
            attribute("name", "\"string\"", "required"),
            attribute("hang", "\"bool\"", "optional"),
            attribute("password", "\"string\"", "optional sensitive write_only"),
            nested(
                "disk",
                ObjectNesting::Single,
                "optional",
                vec![
                    attribute("size", "\"number\"", "required"),
                    attribute("kind", "\"string\"", "optional computed"),
                ],
            ),
            nested(
                "ports",
                ObjectNesting::List,
                "optional",
                vec![
                    attribute("port", "\"number\"", "required"),
                    attribute("id", "\"string\"", "computed"),
                ],
            ),
            nested(
                "tags",
                ObjectNesting::Set,
                "optional",
                vec![attribute("key", "\"string\"", "required")],
            ),
            nested(
                "labels",
                ObjectNesting::Map,
                "optional",
                vec![attribute("value", "\"string\"", "required")],
            ),
        ],
        ..Block::default()
    }
}

fn schema(block: Block) -> pb::Schema {
    pb::Schema {
        version: 0,
        block: Some(block),
    }
}

fn decode(value: Option<pb::DynamicValue>) -> Result<Mp, Status> {
    let bytes = value.map(|v| v.msgpack).unwrap_or_default();
    if bytes.is_empty() {
        return Ok(Mp::Nil);
    }
    rmpv::decode::read_value(&mut bytes.as_slice())
        .map_err(|e| Status::invalid_argument(format!("msgpack: {e}")))
}

fn encode(value: &Mp) -> Option<pb::DynamicValue> {
    let mut msgpack = Vec::new();
    rmpv::encode::write_value(&mut msgpack, value).expect("write to a Vec");
    Some(pb::DynamicValue {
        msgpack,
        json: Vec::new(),
    })
}

fn unknown() -> Mp {
    Mp::Ext(0, vec![0])
}

fn get<'a>(object: &'a Mp, name: &str) -> Option<&'a Mp> {
    object
        .as_map()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(name))
        .map(|(_, v)| v)
}

/// Sets `name` in a msgpack map (replacing it when present).
fn set(object: &mut Mp, name: &str, value: Mp) {
    if let Mp::Map(entries) = object {
        match entries.iter_mut().find(|(k, _)| k.as_str() == Some(name)) {
            Some((_, v)) => *v = value,
            None => entries.push((Mp::from(name), value)),
        }
    }
}

/// Gives every null `name` in `object` the value `fill` makes of it.
fn fill_null(object: &mut Mp, name: &str, fill: impl FnOnce(&Mp) -> Mp) {
    if get(object, name).is_some_and(Mp::is_nil) {
        let value = fill(object);
        set(object, name, value);
    }
}

fn is_unknown(v: Option<&Mp>) -> bool {
    matches!(v, Some(Mp::Ext(..)))
}

fn error(summary: &str) -> pb::Diagnostic {
    pb::Diagnostic {
        severity: pb::diagnostic::Severity::Error as i32,
        summary: summary.into(),
        ..pb::Diagnostic::default()
    }
}

/// The planned object: computed values unknown (the disk kind defaults),
/// the write-only password null (except for a server named `leaky`,
/// which plans it as a buggy provider would).
fn plan(proposed: &Mp) -> Mp {
    let mut planned = proposed.clone();
    fill_null(&mut planned, "id", |_| unknown());
    if get(&planned, "name").and_then(Mp::as_str) != Some("leaky") {
        set(&mut planned, "password", Mp::Nil);
    }
    if let Some(mut disk) = get(&planned, "disk").filter(|d| d.is_map()).cloned() {
        fill_null(&mut disk, "kind", |_| Mp::from("standard"));
        set(&mut planned, "disk", disk);
    }
    if let Some(Mp::Array(ports)) = get(&planned, "ports").cloned() {
        let ports = ports
            .into_iter()
            .map(|mut port| {
                fill_null(&mut port, "id", |_| unknown());
                port
            })
            .collect();
        set(&mut planned, "ports", Mp::Array(ports));
    }
    planned
}

/// The object as created: the planned one with its unknowns decided.
fn apply(planned: &Mp) -> Mp {
    let mut state = planned.clone();
    let name = get(&state, "name")
        .and_then(Mp::as_str)
        .unwrap_or("")
        .to_string();
    if is_unknown(get(&state, "id")) {
        set(&mut state, "id", Mp::from(format!("srv-{name}")));
    }
    if let Some(Mp::Array(ports)) = get(&state, "ports").cloned() {
        let ports = ports
            .into_iter()
            .map(|mut port| {
                if is_unknown(get(&port, "id")) {
                    let number = get(&port, "port").and_then(Mp::as_i64).unwrap_or(0);
                    set(&mut port, "id", Mp::from(format!("port-{number}")));
                }
                port
            })
            .collect();
        set(&mut state, "ports", Mp::Array(ports));
    }
    state
}

#[tonic::async_trait]
impl Provider for FakeProvider {
    async fn get_provider_schema(
        &self,
        _: Request<pb::get_provider_schema::Request>,
    ) -> Result<Response<pb::get_provider_schema::Response>, Status> {
        let echo = Block {
            attributes: vec![
                attribute("input", "\"string\"", "required"),
                attribute("output", "\"string\"", "computed"),
            ],
            ..Block::default()
        };
        Ok(Response::new(pb::get_provider_schema::Response {
            provider: Some(schema(Block {
                attributes: vec![attribute("region", "\"string\"", "optional")],
                ..Block::default()
            })),
            resource_schemas: [("fake_server".to_string(), schema(server_block()))].into(),
            data_source_schemas: [("fake_echo".to_string(), schema(echo))].into(),
            server_capabilities: Some(pb::ServerCapabilities {
                get_provider_schema_optional: true,
                ..pb::ServerCapabilities::default()
            }),
            ..Default::default()
        }))
    }

    async fn validate_provider_config(
        &self,
        _: Request<pb::validate_provider_config::Request>,
    ) -> Result<Response<pb::validate_provider_config::Response>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn validate_resource_config(
        &self,
        request: Request<pb::validate_resource_config::Request>,
    ) -> Result<Response<pb::validate_resource_config::Response>, Status> {
        let request = request.into_inner();
        let allowed = request
            .client_capabilities
            .is_some_and(|c| c.write_only_attributes_allowed);
        let config = decode(request.config)?;
        let mut diagnostics = Vec::new();
        if !allowed && get(&config, "password").is_some_and(|p| !p.is_nil()) {
            diagnostics.push(error(
                "write-only attributes are not allowed by this client",
            ));
        }
        Ok(Response::new(pb::validate_resource_config::Response {
            diagnostics,
        }))
    }

    async fn validate_data_resource_config(
        &self,
        _: Request<pb::validate_data_resource_config::Request>,
    ) -> Result<Response<pb::validate_data_resource_config::Response>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn upgrade_resource_state(
        &self,
        _: Request<pb::upgrade_resource_state::Request>,
    ) -> Result<Response<pb::upgrade_resource_state::Response>, Status> {
        Err(Status::unimplemented("fake_provider6 stores no state"))
    }

    async fn configure_provider(
        &self,
        _: Request<pb::configure_provider::Request>,
    ) -> Result<Response<pb::configure_provider::Response>, Status> {
        Ok(Response::new(Default::default()))
    }

    async fn read_resource(
        &self,
        request: Request<pb::read_resource::Request>,
    ) -> Result<Response<pb::read_resource::Response>, Status> {
        let request = request.into_inner();
        Ok(Response::new(pb::read_resource::Response {
            new_state: request.current_state,
            private: request.private,
            ..Default::default()
        }))
    }

    async fn plan_resource_change(
        &self,
        request: Request<pb::plan_resource_change::Request>,
    ) -> Result<Response<pb::plan_resource_change::Response>, Status> {
        let request = request.into_inner();
        let proposed = decode(request.proposed_new_state)?;
        if proposed.is_nil() {
            return Ok(Response::new(pb::plan_resource_change::Response {
                planned_state: encode(&Mp::Nil),
                ..Default::default()
            }));
        }
        let prior = decode(request.prior_state)?;
        let mut requires_replace = Vec::new();
        if !prior.is_nil() && get(&prior, "name") != get(&proposed, "name") {
            requires_replace.push(pb::AttributePath {
                steps: vec![pb::attribute_path::Step {
                    selector: Some(pb::attribute_path::step::Selector::AttributeName(
                        "name".into(),
                    )),
                }],
            });
        }
        Ok(Response::new(pb::plan_resource_change::Response {
            planned_state: encode(&plan(&proposed)),
            requires_replace,
            planned_private: b"planned".to_vec(),
            ..Default::default()
        }))
    }

    async fn apply_resource_change(
        &self,
        request: Request<pb::apply_resource_change::Request>,
    ) -> Result<Response<pb::apply_resource_change::Response>, Status> {
        let request = request.into_inner();
        let planned = decode(request.planned_state)?;
        if planned.is_nil() {
            return Ok(Response::new(pb::apply_resource_change::Response {
                new_state: encode(&Mp::Nil),
                ..Default::default()
            }));
        }
        let config = decode(request.config)?;
        if get(&config, "hang") == Some(&Mp::Boolean(true)) {
            self.stop.notified().await;
            return Ok(Response::new(pb::apply_resource_change::Response {
                diagnostics: vec![error("stopped before the server was created")],
                ..Default::default()
            }));
        }
        if request.planned_private != b"planned" {
            return Ok(Response::new(pb::apply_resource_change::Response {
                diagnostics: vec![error("planned private data did not come back")],
                ..Default::default()
            }));
        }
        Ok(Response::new(pb::apply_resource_change::Response {
            new_state: encode(&apply(&planned)),
            private: b"created".to_vec(),
            ..Default::default()
        }))
    }

    async fn import_resource_state(
        &self,
        request: Request<pb::import_resource_state::Request>,
    ) -> Result<Response<pb::import_resource_state::Response>, Status> {
        let request = request.into_inner();
        // Only the id is known from an id alone; every other attribute is
        // null.
        let mut state = Mp::Map(Vec::new());
        for attribute in server_block().attributes {
            set(&mut state, &attribute.name, Mp::Nil);
        }
        set(&mut state, "id", Mp::from(request.id));
        Ok(Response::new(pb::import_resource_state::Response {
            imported_resources: vec![pb::import_resource_state::ImportedResource {
                type_name: request.type_name,
                state: encode(&state),
                private: Vec::new(),
            }],
            ..Default::default()
        }))
    }

    async fn read_data_source(
        &self,
        request: Request<pb::read_data_source::Request>,
    ) -> Result<Response<pb::read_data_source::Response>, Status> {
        let mut state = decode(request.into_inner().config)?;
        let input = get(&state, "input")
            .and_then(Mp::as_str)
            .unwrap_or("")
            .to_string();
        set(&mut state, "output", Mp::from(format!("echo: {input}")));
        Ok(Response::new(pb::read_data_source::Response {
            state: encode(&state),
            ..Default::default()
        }))
    }

    async fn stop_provider(
        &self,
        _: Request<pb::stop_provider::Request>,
    ) -> Result<Response<pb::stop_provider::Response>, Status> {
        self.stop.notify_waiters();
        Ok(Response::new(pb::stop_provider::Response::default()))
    }
}
