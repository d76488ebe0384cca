//! Generates the gRPC code for the plugin protocol from the proto files in
//! `proto/`, using the protoc that ships as a build dependency so no system
//! protoc is needed.
//!
//! - The engine's clients: protocols 5 and 6 and go-plugin's services.
//!   Messages protocol 6 declares exactly as protocol 5 does are mapped to
//!   the protocol 5 types, so one conversion serves both protocols.
//! - Servers for the protocol 6 fake provider the tests launch
//!   (`examples/fake_provider6.rs`), in `$OUT_DIR/fake_server`; the engine
//!   itself never compiles them.

use std::path::PathBuf;

/// Messages identical on the wire in protocols 5 and 6.
const SHARED_MESSAGES: [&str; 8] = [
    "DynamicValue",
    "Diagnostic",
    "AttributePath",
    "StringKind",
    "RawState",
    "Function",
    "ServerCapabilities",
    "ClientCapabilities",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // The build script is single-threaded; prost-build reads PROTOC.
    std::env::set_var("PROTOC", protoc);
    let include = protoc_bin_vendored::include_path()?;
    let includes = [
        "proto",
        include.to_str().ok_or("protoc include path is not UTF-8")?,
    ];

    tonic_prost_build::configure()
        .build_server(false)
        .compile_protos(
            &["proto/tfplugin5.proto", "proto/goplugin.proto"],
            &includes,
        )?;

    let mut v6 = tonic_prost_build::configure().build_server(false);
    for name in SHARED_MESSAGES {
        v6 = v6.extern_path(
            format!(".tfplugin6.{name}"),
            format!("crate::provider::grpc::pb5::{name}"),
        );
    }
    v6.compile_protos(&["proto/tfplugin6.proto"], &includes)?;

    let fake_server = PathBuf::from(std::env::var("OUT_DIR")?).join("fake_server");
    std::fs::create_dir_all(&fake_server)?;
    tonic_prost_build::configure()
        .build_client(false)
        .out_dir(&fake_server)
        .compile_protos(
            &["proto/tfplugin6.proto", "proto/goplugin.proto"],
            &includes,
        )?;

    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
