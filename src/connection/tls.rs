//! TLS settings for connections to Redis (feature `tls`, on by default).

use std::path::Path;
use std::sync::Arc;

use fred::rustls::pki_types::pem::PemObject;
use fred::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use fred::rustls::{ClientConfig, RootCertStore};
use fred::types::config::TlsConnector;

use crate::error::{Error, Result};

/// Which certificates a TLS connection to Redis trusts, and which one it
/// shows when the server asks for a client certificate.
///
/// A `rediss://` URL alone trusts the system's roots. Redis deployments
/// usually have their own CA (and Redis asks clients for a certificate by
/// default: `tls-auth-clients yes`), so most of them need this; it is what
/// Redisson's `sslTruststore` and `sslKeystore` settings say on the Java side.
/// Set it with [`ClientBuilder::tls`](crate::ClientBuilder::tls), which turns
/// TLS on whatever the URL's scheme.
///
/// ```no_run
/// # async fn demo() -> delayq::Result<()> {
/// use delayq::{Client, Tls};
///
/// let tls = Tls::with_ca_file("/etc/redis/tls/ca.crt")?
///     .client_cert_files("/etc/redis/tls/client.crt", "/etc/redis/tls/client.key")?;
/// let client = Client::builder()
///     .url("rediss://redis.internal:6380")
///     .tls(tls)
///     .build()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Tls {
    /// `None`: the system's roots, loaded when connecting.
    roots: Option<RootCertStore>,
    client: Option<ClientCert>,
}

/// A certificate chain and its key; rustls keys are not `Clone`, so it is shared.
#[derive(Clone)]
struct ClientCert(Arc<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>);

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field(
                "roots",
                &self
                    .roots
                    .as_ref()
                    .map_or("system".to_owned(), |r| format!("{} CA(s)", r.len())),
            )
            .field("client_cert", &self.client.is_some())
            .finish()
    }
}

impl Default for Tls {
    fn default() -> Self {
        Tls::system_roots()
    }
}

impl Tls {
    /// Trust the system's root certificates (what `rediss://` does alone).
    ///
    /// ```
    /// let tls = delayq::Tls::system_roots();
    /// # let _ = tls;
    /// ```
    pub fn system_roots() -> Tls {
        Tls {
            roots: None,
            client: None,
        }
    }

    /// Trust only the CA certificates in `pem` (one or more `CERTIFICATE`
    /// blocks): a private CA, or a server's self-signed certificate.
    ///
    /// ```
    /// let error = delayq::Tls::with_ca_pem(b"not a certificate").unwrap_err();
    /// assert!(matches!(error, delayq::Error::Tls(_)));
    /// ```
    pub fn with_ca_pem(pem: &[u8]) -> Result<Tls> {
        let certs = certificates(pem, "the CA PEM")?;
        let mut roots = RootCertStore::empty();
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| Error::Tls(format!("unusable CA certificate: {e}")))?;
        }
        Ok(Tls {
            roots: Some(roots),
            client: None,
        })
    }

    /// [`with_ca_pem`](Self::with_ca_pem) reading the PEM from a file.
    ///
    /// ```
    /// let error = delayq::Tls::with_ca_file("/nonexistent/ca.crt").unwrap_err();
    /// assert!(error.to_string().contains("/nonexistent/ca.crt"));
    /// ```
    pub fn with_ca_file(path: impl AsRef<Path>) -> Result<Tls> {
        Tls::with_ca_pem(&read(path.as_ref())?)
    }

    /// Show this certificate chain and key (PEM) when the server asks for a
    /// client certificate (`tls-auth-clients yes`, Redis's default).
    ///
    /// ```
    /// let error = delayq::Tls::system_roots()
    ///     .client_cert_pem(b"", b"")
    ///     .unwrap_err();
    /// assert!(error.to_string().contains("no certificate"));
    /// ```
    pub fn client_cert_pem(mut self, cert_chain: &[u8], key: &[u8]) -> Result<Tls> {
        let chain = certificates(cert_chain, "the client certificate PEM")?;
        let key = PrivateKeyDer::from_pem_slice(key)
            .map_err(|e| Error::Tls(format!("no private key in the client key PEM: {e}")))?;
        self.client = Some(ClientCert(Arc::new((chain, key))));
        Ok(self)
    }

    /// [`client_cert_pem`](Self::client_cert_pem) reading both PEMs from files.
    ///
    /// ```
    /// let error = delayq::Tls::system_roots()
    ///     .client_cert_files("/nonexistent/client.crt", "/nonexistent/client.key")
    ///     .unwrap_err();
    /// assert!(matches!(error, delayq::Error::Tls(_)));
    /// ```
    pub fn client_cert_files(self, cert_chain: impl AsRef<Path>, key: impl AsRef<Path>) -> Result<Tls> {
        let chain = read(cert_chain.as_ref())?;
        let key = read(key.as_ref())?;
        self.client_cert_pem(&chain, &key)
    }

    /// The connector fred uses for every connection of a client.
    pub(crate) fn connector(&self) -> Result<TlsConnector> {
        let roots = match &self.roots {
            Some(roots) => roots.clone(),
            None => system_roots()?,
        };
        // An explicit provider: the process default is ambiguous (and
        // `builder()` panics) when another crate enables rustls's aws-lc-rs too.
        let provider = Arc::new(fred::rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Tls(e.to_string()))?
            .with_root_certificates(roots);
        let config = match &self.client {
            None => builder.with_no_client_auth(),
            Some(ClientCert(cert)) => builder
                .with_client_auth_cert(cert.0.clone(), cert.1.clone_key())
                .map_err(|e| Error::Tls(format!("unusable client certificate or key: {e}")))?,
        };
        Ok(TlsConnector::from(config))
    }
}

fn system_roots() -> Result<RootCertStore> {
    let found = fred::rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found.errors.first().map(|e| format!(": {e}")).unwrap_or_default();
        return Err(Error::Tls(format!(
            "no system root certificates found{why}; give the CA with Tls::with_ca_file"
        )));
    }
    Ok(roots)
}

fn certificates(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Tls(format!("{what} does not parse: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Tls(format!("no certificate in {what}")));
    }
    Ok(certs)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::Tls(format!("cannot read {}: {e}", path.display())))
}
