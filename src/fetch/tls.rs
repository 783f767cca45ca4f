//! TLS settings: one rustls client configuration for the whole crawl, built once.
//!
//! The roots are Mozilla's (`webpki-root-certs`) plus the `--ca-cert` files' certificates, so a
//! private CA adds to the public ones instead of replacing them. `--insecure` swaps the
//! certificate check for one that accepts anything ([`AcceptAnything`]); the handshake is
//! otherwise the same. The crypto is `ring`'s, named explicitly so that no process-wide default
//! provider matters.
//!
//! Sessions are resumed (TLS 1.3 tickets, TLS 1.2 session IDs and tickets) from an in-memory
//! cache of `sessions` servers, sized like the idle connection pool (`client::idle_hosts`): the
//! crawler cycles through every host with work, each resting between its requests, and a
//! server that closes idle connections sooner than the rest (nginx's default is 75 s, many
//! close after 5 s) would otherwise cost a full handshake per request. rustls's own default
//! keeps 256 servers, an LRU that always misses once more hosts than that are in turn.

use rustls::client::Resumption;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;

/// The client configuration: Mozilla's roots and `extra_roots`, or no checks with `insecure`;
/// sessions of up to `sessions` servers kept for resumption (0: none, every handshake full).
pub fn client_config(
    extra_roots: &[CertificateDer<'static>],
    insecure: bool,
    sessions: usize,
) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions");
    let mut config = match insecure {
        true => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnything(provider)))
            .with_no_client_auth(),
        false => {
            let mut roots = RootCertStore::empty();
            roots.add_parsable_certificates(
                webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().cloned(),
            );
            roots.add_parsable_certificates(extra_roots.iter().cloned());
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    config.resumption = match sessions {
        0 => Resumption::disabled(),
        n => Resumption::in_memory_sessions(n),
    };
    Arc::new(config)
}

/// The certificates of a PEM text (other items, keys say, are skipped); an error names what
/// is wrong with the PEM.
pub fn pem_certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

/// `--insecure`'s verifier: every certificate and signature is accepted.
#[derive(Debug)]
struct AcceptAnything(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AcceptAnything {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verify_tls12_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
