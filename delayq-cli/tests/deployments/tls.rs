//! TLS: a redis-server with a TLS port and client-certificate checks
//! (`tls-auth-clients yes`), its certificates made here by a throwaway CA.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use delayq::{Client, Error, StringCodec, Tls};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

use crate::redis_server::{free_port, RedisServer};
use crate::{assert_transferred, cli, DEADLINE};

/// PEM files of a CA, a server certificate for 127.0.0.1, and a client certificate.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn make() -> Pki {
        let dir = tempfile::Builder::new().prefix("delayq-tls-").tempdir().unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "delayq test CA");
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let write = |name: &str, pem: String| std::fs::write(dir.path().join(name), pem).unwrap();
        write("ca.crt", ca_cert.pem());
        for (who, names) in [
            ("server", vec!["127.0.0.1", "localhost"]),
            ("client", vec!["orders-svc"]),
        ] {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(names.into_iter().map(String::from).collect::<Vec<_>>()).unwrap();
            params.distinguished_name.push(DnType::CommonName, who);
            let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
            write(&format!("{who}.crt"), cert.pem());
            write(&format!("{who}.key"), key.serialize_pem());
        }
        Pki { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).unwrap()
    }
}

/// A server with a TLS port that checks client certificates (its plain port
/// stays open for the harness's readiness check only).
async fn tls_server(pki: &Pki) -> (RedisServer, u16) {
    let port = free_port();
    let file = |name: &str| pki.path(name).display().to_string();
    let server = RedisServer::start_with(&[
        "--tls-port",
        &port.to_string(),
        "--tls-cert-file",
        &file("server.crt"),
        "--tls-key-file",
        &file("server.key"),
        "--tls-ca-cert-file",
        &file("ca.crt"),
        "--tls-auth-clients",
        "yes",
    ])
    .await;
    (server, port)
}

async fn connect(url: &str, tls: Option<Tls>) -> delayq::Result<Client> {
    let mut builder = Client::builder()
        .url(url)
        .connect_timeout(Duration::from_secs(3))
        .blocking_timeout(Duration::from_secs(1));
    if let Some(tls) = tls {
        builder = builder.tls(tls);
    }
    builder.build().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_work_over_tls_with_a_private_ca_and_a_client_certificate() {
    tokio::time::timeout(DEADLINE, async {
        let pki = Pki::make();
        let (_server, port) = tls_server(&pki).await;
        let url = format!("rediss://127.0.0.1:{port}");
        let tls = Tls::with_ca_pem(&pki.read("ca.crt"))
            .unwrap()
            .client_cert_pem(&pki.read("client.crt"), &pki.read("client.key"))
            .unwrap();

        // Commands, the subscriber, the transfer and a blocking take: all over TLS.
        let client = connect(&url, Some(tls.clone())).await.expect("TLS client connects");
        let queue = client.delayed_queue("tls-q", StringCodec).unwrap();
        queue.offer(&"a".to_owned(), Duration::from_millis(300)).await.unwrap();
        let reliable = client.reliable_queue("tls-q", StringCodec).unwrap();
        let delivery = tokio::time::timeout(Duration::from_secs(10), reliable.take())
            .await
            .expect("delivered over TLS")
            .unwrap();
        assert_eq!(delivery.value(), "a");
        delivery.ack().await.unwrap();
        assert_transferred(&client, 1).await;
        client.shutdown().await;

        // The same over `--tls-*` files in the CLI.
        queue_one_for_the_cli(&url, tls).await;
        let (ca, cert, key) = (pki.path("ca.crt"), pki.path("client.crt"), pki.path("client.key"));
        let args = ["inspect", "tls-cli", "--format", "json", "--tls-ca-cert"].map(OsStr::new);
        let tls_args = [
            ca.as_os_str(),
            OsStr::new("--tls-cert"),
            cert.as_os_str(),
            OsStr::new("--tls-key"),
            key.as_os_str(),
        ];
        let cli = cli(&url, args.into_iter().chain(tls_args)).await;
        let stdout = String::from_utf8_lossy(&cli.stdout);
        assert!(cli.status.success(), "{cli:?}");
        assert!(
            stdout.contains("\"pending\":1") || stdout.contains("\"pending\": 1"),
            "{stdout}"
        );
    })
    .await
    .expect("test exceeded its deadline");
}

async fn queue_one_for_the_cli(url: &str, tls: Tls) {
    let client = connect(url, Some(tls)).await.unwrap();
    let queue = client.delayed_queue("tls-cli", StringCodec).unwrap().without_transfer();
    queue.offer(&"b".to_owned(), Duration::from_secs(600)).await.unwrap();
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_mistakes_are_clear_errors() {
    tokio::time::timeout(DEADLINE, async {
        let pki = Pki::make();
        let (_server, port) = tls_server(&pki).await;
        let url = format!("rediss://127.0.0.1:{port}");
        let with_ca = || Tls::with_ca_pem(&pki.read("ca.crt")).unwrap();

        // The system's roots do not know the private CA.
        let error = connect(&url, None).await.expect_err("untrusted server certificate");
        assert!(error.to_string().contains("UnknownIssuer"), "{error}");

        // The server asks for a client certificate and gets none.
        let error = connect(&url, Some(with_ca())).await.expect_err("no client certificate");
        assert!(error.to_string().contains("CertificateRequired"), "{error}");

        // A certificate from another CA is not trusted either.
        let other = Pki::make();
        let error = connect(&url, Some(Tls::with_ca_pem(&other.read("ca.crt")).unwrap()))
            .await
            .expect_err("server certificate from another CA");
        assert!(error.to_string().contains("InvalidCertificate"), "{error}");

        // A plain-text client on the TLS port does not get through.
        assert!(connect(&format!("redis://127.0.0.1:{port}"), None).await.is_err());

        // Files that are not PEM certificates or keys: a typed error naming them.
        let error = Tls::with_ca_file(pki.path("client.key")).expect_err("a key is not a CA");
        assert!(matches!(error, Error::Tls(_)), "{error:?}");
        let error = with_ca()
            .client_cert_files(pki.path("client.crt"), pki.path("ca.crt"))
            .expect_err("a certificate is not a key");
        assert!(error.to_string().contains("private key"), "{error}");

        // The CLI says what to add: the CA, then the client certificate.
        let ca = pki.path("ca.crt");
        let hints = [
            (vec![OsStr::new("inspect"), OsStr::new("q")], "--tls-ca-cert"),
            (
                vec![
                    OsStr::new("inspect"),
                    OsStr::new("q"),
                    OsStr::new("--tls-ca-cert"),
                    ca.as_os_str(),
                ],
                "--tls-cert FILE --tls-key FILE",
            ),
        ];
        for (args, hint) in hints {
            let out = cli(&url, args).await;
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains(hint), "{stderr}");
        }
    })
    .await
    .expect("test exceeded its deadline");
}
