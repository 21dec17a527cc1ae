//! A line granted named hosts reaches them through a proxy of its own, and nothing else.
//!
//! Landlock decides a TCP connection by its port, and a port is every host's: a line granted
//! `registry.npmjs.org:443` by port would reach any host on 443. A name is only known to whoever
//! resolves it, so the line does not: its **only** way out is this proxy, an HTTP proxy
//! (`CONNECT host:port` for TLS and anything else, absolute-form requests for plain HTTP) in the
//! supervisor, on `127.0.0.1` and a port of the kernel's choosing, named to the line by the
//! standard variables (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and their lowercase forms;
//! `NO_PROXY` is dropped). It decides on the **name the client asked for**: a name or an address
//! literal the grant admits ([`Endpoint::admits`]) is resolved here, by the supervisor, and
//! connected to; anything else is answered `403` and noted ([`Denial::Host`]), so the line's
//! refusal names `host:port` and a person's yes can grant exactly it. TLS is not terminated: the
//! bytes after `CONNECT` are relayed as they are.
//!
//! *Why the line has no other way* (the argument is the seccomp filter's, see `notify` and
//! `unix_connect`): without the network, a line's only internet sockets are TCP sockets (no UDP,
//! no raw sockets, no Fast Open, no `io_uring`), and every `connect` of one is made by the
//! supervisor on its own copy of the socket, after reading the address once: to this proxy's
//! exact address (the copy is first bound to a loopback port, which the proxy is told to expect
//! — [`Door`] — so a connection from any other process on the machine is not served), to a port
//! the grant gives on any host, or refused. Landlock's TCP rules hold the same ports beneath.
//!
//! Not covered, and said so in docs/sandbox.md: a client that ignores the proxy variables
//! (`ssh`, Node's built-in `fetch`) connects directly and is refused (named as such); UDP and
//! QUIC have no proxy; SOCKS is not spoken.

use super::notify::Denial;
use crate::policy::endpoint::Endpoint;
use std::collections::BTreeSet;
use std::io::{self, Read, Write};
use std::net::{
    Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream, ToSocketAddrs,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The most bytes of a request's head (its request line and headers) the proxy reads.
const HEAD_LIMIT: usize = 16 * 1024;
/// How long the proxy waits for a request's head, and for a host to answer a connection.
const WAIT: Duration = Duration::from_secs(30);
/// The most connections a line has through its proxy at once (each holds two threads).
const CONNECTIONS: usize = 256;
/// The most refusals a line's proxy notes.
const NOTED: usize = 64;

/// Where the line's sockets are connected to reach the proxy, and the loopback ports of the
/// connections the supervisor made there (the proxy serves those only).
#[derive(Debug)]
pub struct Door {
    address: SocketAddrV4,
    expected: Mutex<BTreeSet<u16>>,
}

impl Door {
    /// The proxy's address.
    pub fn address(&self) -> SocketAddrV4 {
        self.address
    }

    /// A connection from `port` on loopback is the line's: the supervisor bound its socket there.
    pub fn expect(&self, port: u16) {
        self.expected
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(port);
    }

    /// Forgets `port` (its connection failed); whether it was expected.
    pub fn forget(&self, port: u16) -> bool {
        self.expected
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&port)
    }
}

/// The proxy of one line: a thread accepting on [`Door::address`], a thread or two per
/// connection. Dropped, it stops accepting; connections already made go on until either side
/// closes (the line's processes are gone by then: a line ends when its last process does).
#[derive(Debug)]
pub struct Proxy {
    door: Arc<Door>,
    denials: Arc<Mutex<Vec<Denial>>>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    /// Listens on `127.0.0.1` and a free port, and serves the line's connections to `hosts`.
    pub fn start(hosts: Vec<Endpoint>) -> io::Result<Proxy> {
        let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))?;
        let address = match listener.local_addr()? {
            SocketAddr::V4(address) => address,
            SocketAddr::V6(_) => return Err(io::Error::from_raw_os_error(libc::EAFNOSUPPORT)),
        };
        let door = Arc::new(Door {
            address,
            expected: Mutex::new(BTreeSet::new()),
        });
        let denials = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let served = Served {
            door: door.clone(),
            hosts: Arc::new(hosts),
            denials: denials.clone(),
            stop: stop.clone(),
            open: Arc::new(()),
        };
        std::thread::Builder::new()
            .name("sandbox-proxy".into())
            .spawn(move || served.accept(listener))?;
        Ok(Proxy {
            door,
            denials,
            stop,
        })
    }

    pub fn door(&self) -> Arc<Door> {
        self.door.clone()
    }

    /// `http://127.0.0.1:PORT`, the proxy variables' value.
    pub fn url(&self) -> String {
        format!("http://{}", self.door.address)
    }

    /// The connections refused so far (taken).
    pub fn take_denials(&self) -> Vec<Denial> {
        std::mem::take(&mut *self.denials.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stop` (the connection is not expected).
        drop(TcpStream::connect_timeout(
            &SocketAddr::V4(self.door.address),
            Duration::from_secs(1),
        ));
    }
}

/// What the accepting thread and the connections' threads share.
#[derive(Clone)]
struct Served {
    door: Arc<Door>,
    hosts: Arc<Vec<Endpoint>>,
    denials: Arc<Mutex<Vec<Denial>>>,
    stop: Arc<AtomicBool>,
    /// Counted by `Arc::strong_count`: one per connection being served, plus this one.
    open: Arc<()>,
}

impl Served {
    fn accept(self, listener: TcpListener) {
        for stream in listener.incoming() {
            if self.stop.load(Ordering::SeqCst) {
                return;
            }
            let Ok(client) = stream else { continue };
            // Served only when the supervisor made it for the line (see `Door`).
            let line_s = client
                .peer_addr()
                .is_ok_and(|peer| peer.ip().is_loopback() && self.door.forget(peer.port()));
            if !line_s || Arc::strong_count(&self.open) > CONNECTIONS {
                continue;
            }
            let served = self.clone();
            // No thread: the connection is closed, as a full proxy's would be.
            drop(
                std::thread::Builder::new()
                    .name("sandbox-proxy-conn".into())
                    .spawn(move || served.serve(client)),
            );
        }
    }

    /// One connection: its request decided, then relayed to the host, or refused.
    fn serve(&self, mut client: TcpStream) {
        let Ok((head, rest)) = read_head(&mut client) else {
            return;
        };
        let request = match Request::parse(&head) {
            Ok(request) => request,
            Err(reason) => {
                answer(&mut client, "400 Bad Request", reason);
                return;
            }
        };
        if !self
            .hosts
            .iter()
            .any(|e| e.admits(&request.host, request.port))
        {
            self.note(Denial::Host {
                host: request.host.clone(),
                port: request.port,
            });
            answer(
                &mut client,
                "403 Forbidden",
                &format!(
                    "shellgate: {}:{} is not granted to this line",
                    request.host, request.port
                ),
            );
            return;
        }
        let upstream = match reach(&request.host, request.port) {
            Ok(upstream) => upstream,
            Err(e) => {
                answer(
                    &mut client,
                    "502 Bad Gateway",
                    &format!(
                        "shellgate: cannot reach {}:{}: {e}",
                        request.host, request.port
                    ),
                );
                return;
            }
        };
        let opened = match &request.forward {
            None => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n"),
            Some(head) => (&upstream).write_all(head),
        };
        if opened.and_then(|()| (&upstream).write_all(&rest)).is_err() {
            return;
        }
        relay(client, upstream);
    }

    fn note(&self, denial: Denial) {
        let mut noted = self.denials.lock().unwrap_or_else(PoisonError::into_inner);
        if noted.len() < NOTED && !noted.contains(&denial) {
            noted.push(denial);
        }
    }
}

/// Reads up to the end of a request's head (`\r\n\r\n`): the head, and what came after it.
fn read_head(client: &mut TcpStream) -> io::Result<(Vec<u8>, Vec<u8>)> {
    client.set_read_timeout(Some(WAIT))?;
    let mut bytes = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            client.set_read_timeout(None)?;
            let rest = bytes.split_off(end + 4);
            return Ok((bytes, rest));
        }
        if bytes.len() > HEAD_LIMIT {
            return Err(io::Error::from_raw_os_error(libc::EMSGSIZE));
        }
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

/// A proxy request: where to, and for plain HTTP the head to send there (origin-form).
#[derive(Debug, PartialEq, Eq)]
struct Request {
    host: String,
    port: u16,
    /// `None` for `CONNECT` (the tunnel starts after the proxy's `200`).
    forward: Option<Vec<u8>>,
}

impl Request {
    fn parse(head: &[u8]) -> Result<Request, &'static str> {
        let text = std::str::from_utf8(head).map_err(|_| "the request is not text")?;
        let (line, headers) = text.split_once("\r\n").ok_or("no request line")?;
        let mut words = line.split(' ');
        let (Some(method), Some(target), Some(version), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err("the request line is not METHOD TARGET VERSION");
        };
        if method == "CONNECT" {
            let (host, port) = authority(target, None).ok_or("CONNECT names no host:port")?;
            return Ok(Request {
                host,
                port,
                forward: None,
            });
        }
        let rest = target
            .strip_prefix("http://")
            .ok_or("only http:// URLs and CONNECT go through this proxy")?;
        let (authority_text, path) = match rest.find(['/', '?']) {
            Some(at) => rest.split_at(at),
            None => (rest, "/"),
        };
        let (host, port) = authority(authority_text, Some(80)).ok_or("the URL names no host")?;
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_owned()
        };
        Ok(Request {
            host,
            port,
            forward: Some(format!("{method} {path} {version}\r\n{headers}").into_bytes()),
        })
    }
}

/// `host:port`, `[v6]:port`, or (with a default port) `host` alone; no user info.
fn authority(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    if text.contains('@') || text.is_empty() {
        return None;
    }
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        match after.strip_prefix(':') {
            Some(port) => (v6, Some(port)),
            None if after.is_empty() => (v6, None),
            None => return None,
        }
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(port) => port.parse().ok().filter(|p| *p != 0)?,
        None => default?,
    };
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

/// Resolves `host` (here, never in the line) and connects to the first of its addresses that
/// answers.
fn reach(host: &str, port: u16) -> io::Result<TcpStream> {
    let mut last = io::Error::from(io::ErrorKind::NotFound);
    for address in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, WAIT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Answers the client with `status` and a line of text, then closes.
fn answer(client: &mut TcpStream, status: &str, text: &str) {
    let body = format!("{text}\n");
    drop(write!(
        client,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
}

/// Copies each side to the other until both have finished.
fn relay(client: TcpStream, upstream: TcpStream) {
    let (Ok(client_back), Ok(upstream_back)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let up = std::thread::Builder::new()
        .name("sandbox-proxy-up".into())
        .spawn(move || copy_then_close(client, upstream));
    copy_then_close(upstream_back, client_back);
    if let Ok(up) = up {
        drop(up.join());
    }
}

/// Copies `from` to `to`, then ends `to`'s writing (its reader sees the end) and `from`'s reading.
fn copy_then_close(mut from: TcpStream, mut to: TcpStream) {
    drop(io::copy(&mut from, &mut to));
    drop(to.shutdown(Shutdown::Write));
    drop(from.shutdown(Shutdown::Read));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_name_their_host_and_port() {
        let connect = Request::parse(b"CONNECT registry.npmjs.org:443 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(
            connect,
            Ok(Request {
                host: "registry.npmjs.org".into(),
                port: 443,
                forward: None
            })
        );
        let v6 = Request::parse(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));
        let get =
            Request::parse(b"GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\n\r\n")
                .unwrap();
        assert_eq!((get.host.as_str(), get.port), ("example.com", 80));
        assert_eq!(
            get.forward.as_deref(),
            Some(&b"GET /a?b HTTP/1.1\r\nHost: example.com\r\n\r\n"[..])
        );
        let bare = Request::parse(b"GET http://example.com:8080 HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(
            (bare.port, bare.forward.as_deref()),
            (8080, Some(&b"GET / HTTP/1.0\r\n\r\n"[..]))
        );
        let query = Request::parse(b"GET http://h?q HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(
            query.forward.as_deref(),
            Some(&b"GET /?q HTTP/1.1\r\n\r\n"[..])
        );
        for bad in [
            &b"CONNECT registry.npmjs.org HTTP/1.1\r\n\r\n"[..],
            b"CONNECT user@evil.com:443 HTTP/1.1\r\n\r\n",
            b"CONNECT evil.com:0 HTTP/1.1\r\n\r\n",
            b"GET /relative HTTP/1.1\r\n\r\n",
            b"GET https://example.com/ HTTP/1.1\r\n\r\n",
            b"GET http://u@evil.com/ HTTP/1.1\r\n\r\n",
            b"GET  http://example.com/ HTTP/1.1\r\n\r\n",
        ] {
            assert!(
                Request::parse(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
