//! A bare RESP client on one socket, for baselines: no pool, no router
//! task, no command objects; what any tokio client pays at least.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

pub struct Conn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    out: Vec<u8>,
    line: String,
}

#[derive(Debug)]
pub enum Reply {
    Nil,
    Int(i64),
    Bytes(Vec<u8>),
    Array(Vec<Reply>),
}

impl Reply {
    pub fn bytes(self) -> Vec<u8> {
        match self {
            Reply::Bytes(b) => b,
            other => panic!("expected bytes, got {other:?}"),
        }
    }
}

impl Conn {
    pub async fn connect(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
        stream.set_nodelay(true).unwrap();
        let (reader, writer) = stream.into_split();
        Conn {
            reader: BufReader::new(reader),
            writer,
            out: Vec::with_capacity(256),
            line: String::new(),
        }
    }

    /// Sends one command and reads its reply; a Redis error panics.
    pub async fn call(&mut self, args: &[&[u8]]) -> Reply {
        use std::io::Write;
        self.out.clear();
        write!(self.out, "*{}\r\n", args.len()).unwrap();
        for arg in args {
            write!(self.out, "${}\r\n", arg.len()).unwrap();
            self.out.extend_from_slice(arg);
            self.out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&self.out).await.expect("write");
        self.read().await
    }

    async fn read(&mut self) -> Reply {
        let mut pending = vec![(None::<usize>, Vec::new())];
        loop {
            self.line.clear();
            self.reader.read_line(&mut self.line).await.expect("read");
            let (kind, rest) = self.line.trim_end().split_at(1);
            let n = || rest.parse::<i64>().expect("a number");
            let reply = match kind {
                "+" => Reply::Bytes(rest.as_bytes().to_vec()),
                "-" => panic!("Redis error: {rest}"),
                ":" => Reply::Int(n()),
                "$" if n() < 0 => Reply::Nil,
                "$" => {
                    let mut data = vec![0; n() as usize + 2];
                    self.reader.read_exact(&mut data).await.expect("read");
                    data.truncate(data.len() - 2);
                    Reply::Bytes(data)
                }
                "*" if n() <= 0 => Reply::Array(Vec::new()),
                "*" => {
                    pending.push((Some(n() as usize), Vec::new()));
                    continue;
                }
                other => panic!("unexpected RESP type {other:?}"),
            };
            // Fill the innermost open array; close those that are complete.
            let mut reply = reply;
            loop {
                let (want, items) = pending.last_mut().unwrap();
                match want {
                    None => return reply,
                    Some(want) => {
                        items.push(reply);
                        if items.len() < *want {
                            break;
                        }
                        let (_, items) = pending.pop().unwrap();
                        reply = Reply::Array(items);
                    }
                }
            }
        }
    }
}
