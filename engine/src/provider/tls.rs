//! AutoMTLS as go-plugin does it, seen from the host.
//!
//! The host makes a throwaway client certificate and hands its PEM to the
//! plugin in `PLUGIN_CLIENT_CERT`; the plugin makes its own self-signed
//! server certificate and prints it in the handshake. Each side trusts
//! exactly the other's certificate. go-plugin's server certificate is an
//! ECDSA P-521 CA certificate, so the client uses rustls with the aws-lc-rs
//! provider (ring has no P-521) and a verifier that pins the exact DER from
//! the handshake instead of building a web PKI chain (which refuses a CA
//! certificate as an end entity). grpc-go insists on ALPN `h2`.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

/// Why the TLS client could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    #[error("could not generate the client certificate: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("could not build the TLS client: {0}")]
    Config(#[from] rustls::Error),
}

/// The host's side of one plugin's AutoMTLS: a fresh client certificate.
pub struct ClientIdentity {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
    pem: String,
}

impl ClientIdentity {
    /// Generates a self-signed P-256 certificate for `localhost`, valid for
    /// client and server authentication, as go-plugin's own host does.
    pub fn generate() -> Result<Self, TlsError> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()])?;
        let mut name = rcgen::DistinguishedName::new();
        name.push(rcgen::DnType::CommonName, "localhost");
        name.push(rcgen::DnType::OrganizationName, "choudoufu");
        params.distinguished_name = name;
        // The plugin uses this certificate as its only client CA.
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::DigitalSignature,
            rcgen::KeyUsagePurpose::KeyEncipherment,
            rcgen::KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
        ];
        let cert = params.self_signed(&key)?;
        Ok(ClientIdentity {
            pem: cert.pem(),
            cert: cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        })
    }

    /// The certificate as PEM text, the form `PLUGIN_CLIENT_CERT` carries.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A rustls client that presents this identity and accepts only the
    /// server certificate `server_der` the plugin printed.
    pub fn client_config(&self, server_der: &[u8]) -> Result<rustls::ClientConfig, TlsError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let verifier = PinnedServer {
            cert: CertificateDer::from(server_der.to_vec()),
            provider: provider.clone(),
        };
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_client_auth_cert(
                vec![self.cert.clone()],
                PrivateKeyDer::Pkcs8(self.key.clone_key()),
            )?;
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(config)
    }
}

/// Accepts exactly one certificate, byte for byte, and checks handshake
/// signatures against it with the provider's algorithms.
#[derive(Debug)]
struct PinnedServer {
    cert: CertificateDer<'static>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.cert.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_pem_and_builds_a_pinned_client() {
        let id = ClientIdentity::generate().unwrap();
        assert!(id.pem().starts_with("-----BEGIN CERTIFICATE-----"));
        let other = ClientIdentity::generate().unwrap();
        let config = id.client_config(other.cert.as_ref()).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"h2".to_vec()]);
    }

    #[test]
    fn pin_refuses_any_other_certificate() {
        let a = ClientIdentity::generate().unwrap();
        let b = ClientIdentity::generate().unwrap();
        let pinned = PinnedServer {
            cert: a.cert.clone(),
            provider: Arc::new(rustls::crypto::aws_lc_rs::default_provider()),
        };
        let name = ServerName::try_from("localhost").unwrap();
        let now = UnixTime::now();
        assert!(pinned
            .verify_server_cert(&a.cert, &[], &name, &[], now)
            .is_ok());
        assert!(pinned
            .verify_server_cert(&b.cert, &[], &name, &[], now)
            .is_err());
    }
}
