//! A slow link between a replica and its primary, both on loopback: what
//! the primary sends reaches the replica `delay` later (the replica's
//! answers, its acknowledgements among them, go back at once). When the
//! primary's side closes (it died), what the link still holds is dropped
//! and the replica's side is closed: bytes on their way when a primary
//! dies are lost with it, as those still in a dead primary's output
//! buffer, or in a link that broke, are. It makes the window real in which
//! a primary has acknowledged a write its replica does not have yet.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The link; stops (and cuts what goes through it) when dropped.
pub struct DelayLink {
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl DelayLink {
    /// A link to the server on `upstream`, delaying what it sends by `delay`.
    pub async fn start(upstream: u16, delay: Duration) -> DelayLink {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the link");
        let port = listener.local_addr().expect("local addr").port();
        let task = tokio::spawn(async move {
            let mut links = tokio::task::JoinSet::new();
            while let Ok((replica, _)) = listener.accept().await {
                let Ok(primary) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                    continue; // the primary is gone: the replica's try is refused
                };
                let _ = replica.set_nodelay(true);
                let _ = primary.set_nodelay(true);
                links.spawn(carry(replica, primary, delay));
            }
        });
        DelayLink { port, task }
    }

    /// The port a replica connects to (`--replicaof 127.0.0.1 PORT`).
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for DelayLink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One connection: replica → primary at once, primary → replica `delay` late.
async fn carry(replica: TcpStream, primary: TcpStream, delay: Duration) {
    let (mut from_replica, mut to_replica) = replica.into_split();
    let (mut from_primary, mut to_primary) = primary.into_split();
    let (held, mut due) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let up = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from_replica.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if to_primary.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            }
        }
    };
    let down_read = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from_primary.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if held.send((Instant::now() + delay, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    };
    let down_write = async {
        while let Some((at, bytes)) = due.recv().await {
            tokio::time::sleep_until(at).await;
            if to_replica.write_all(&bytes).await.is_err() {
                return;
            }
        }
    };
    // The first side to end ends the link: what it held is dropped.
    tokio::select! {
        _ = up => {}
        _ = down_read => {}
        _ = down_write => {}
    }
}
