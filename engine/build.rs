//! Generates the gRPC client code for the plugin protocol from the proto
//! files in `proto/`, using the protoc that ships as a build dependency so
//! no system protoc is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // The build script is single-threaded; prost-build reads PROTOC.
    std::env::set_var("PROTOC", protoc);
    let include = protoc_bin_vendored::include_path()?;
    tonic_prost_build::configure()
        .build_server(false)
        .compile_protos(
            &["proto/tfplugin5.proto", "proto/goplugin.proto"],
            &[
                "proto",
                include.to_str().ok_or("protoc include path is not UTF-8")?,
            ],
        )?;
    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
