//! A line granted named hosts reaches them through a proxy of its own, and nothing else.
//!
//! Landlock decides a TCP connection by its port, and a port is every host's: a line granted
//! `registry.npmjs.org:443` by port would reach any host on 443. A name is only known to whoever
//! resolves it, so the line does not: its **only** way out is this proxy, an HTTP proxy
//! (`CONNECT host:port` for TLS and anything else, absolute-form requests for plain HTTP) and a
//! SOCKS5 one (`CONNECT`, names resolved here: `socks5h`) on the same port — the first byte tells
//! them apart — in the supervisor, on `127.0.0.1` and a port of the kernel's choosing, named to
//! the line by the standard variables (`HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY`, which holds
//! the SOCKS URL, and their lowercase forms; `NO_PROXY` is dropped). It decides on the **name the client asked for**: a name or an address
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
//! QUIC have no proxy (SOCKS5's `UDP ASSOCIATE` and `BIND` are answered "not supported").

use super::notify::Denial;
use shellgate_core::policy::endpoint::Endpoint;
use std::collections::BTreeSet;
use std::io::{self, Read, Write};
use std::net::{
    Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream, ToSocketAddrs,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The variables that name a proxy to HTTP clients (curl, git, npm, pip, cargo, go, Python):
/// a line reaching named hosts gets its own proxy in each, and no `NO_PROXY` (every host goes
/// through it; one that did not would only be refused). They are the sandbox's, as the line's
/// proxy is: they never come back into a person's shell (`shell::state::is_shell_own`).
pub const VARIABLES: [&str; 8] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

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

    /// The proxy variables and their values: `http://127.0.0.1:PORT` for HTTP clients, and
    /// `socks5h://127.0.0.1:PORT` (the same port, names resolved here) in `ALL_PROXY`, which
    /// clients read for what has no variable of its own (curl's other protocols). `NO_PROXY` is
    /// left out: it is only removed.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        VARIABLES
            .iter()
            .filter(|name| !name.eq_ignore_ascii_case("no_proxy"))
            .map(|name| {
                let scheme = if name.eq_ignore_ascii_case("all_proxy") {
                    "socks5h"
                } else {
                    "http"
                };
                (*name, format!("{scheme}://{}", self.door.address))
            })
            .collect()
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

    /// One connection: its request decided, then relayed to the host, or refused. It speaks
    /// SOCKS5 when its first byte says so, else HTTP.
    fn serve(&self, mut client: TcpStream) {
        let mut first = [0u8; 1];
        if client.set_read_timeout(Some(WAIT)).is_err() || client.read_exact(&mut first).is_err() {
            return;
        }
        if first[0] == socks::VERSION {
            return self.serve_socks(client);
        }
        let Ok((head, mut rest)) = read_head(&mut client, first[0]) else {
            return;
        };
        let request = match Request::parse(&head) {
            Ok(request) => request,
            Err(reason) => {
                answer(&mut client, "400 Bad Request", reason);
                return;
            }
        };
        if !self.admits(&request.host, request.port) {
            self.refuse(&mut client, &request.host, request.port);
            return;
        }
        if request.forward.is_none() {
            // A tunnel: open to the client first, so that the TLS hello it starts with can be
            // read before anything is connected (see `tunnel_may_open`).
            if client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .is_err()
                || !self.tunnel_may_open(&mut client, &request, &mut rest)
            {
                return;
            }
        }
        let upstream = match reach(&request.host, request.port) {
            Ok(upstream) => upstream,
            Err(e) => {
                if request.forward.is_some() {
                    let text = format!(
                        "shellgate: cannot reach {}:{}: {e}",
                        request.host, request.port
                    );
                    answer(&mut client, "502 Bad Gateway", &text);
                }
                return;
            }
        };
        let opened = match &request.forward {
            None => Ok(()),
            Some(head) => (&upstream).write_all(head),
        };
        if opened.and_then(|()| (&upstream).write_all(&rest)).is_err() {
            return;
        }
        relay(client, upstream);
    }

    /// A SOCKS5 connection (RFC 1928: `CONNECT`, no authentication): the name or address the
    /// client asks for is decided as a `CONNECT`'s is — refused with "not allowed by ruleset"
    /// and named, or answered "succeeded" and then, like a tunnel, its TLS hello checked before
    /// anything is connected. A host that then cannot be reached closes the connection.
    fn serve_socks(&self, mut client: TcpStream) {
        let Some((host, port)) = socks::request(&mut client) else {
            return;
        };
        // The wait was for the request; a tunnel may then be idle as long as its ends like.
        if client.set_read_timeout(None).is_err() {
            return;
        }
        if !self.admits(&host, port) {
            self.note(Denial::Host {
                host: host.clone(),
                port,
            });
            let _ = client.write_all(&socks::reply(socks::NOT_ALLOWED));
            return;
        }
        if client.write_all(&socks::reply(socks::SUCCEEDED)).is_err() {
            return;
        }
        let request = Request {
            host,
            port,
            forward: None,
        };
        let mut rest = Vec::new();
        if !self.tunnel_may_open(&mut client, &request, &mut rest) {
            return;
        }
        let Ok(upstream) = reach(&request.host, request.port) else {
            return;
        };
        if (&upstream).write_all(&rest).is_ok() {
            relay(client, upstream);
        }
    }

    fn admits(&self, host: &str, port: u16) -> bool {
        self.hosts.iter().any(|e| e.admits(host, port))
    }

    /// Answers `403`, naming `host:port`, and notes it.
    fn refuse(&self, client: &mut TcpStream, host: &str, port: u16) {
        self.note(Denial::Host {
            host: host.to_owned(),
            port,
        });
        let text = format!("shellgate: {host}:{port} is not granted to this line");
        answer(client, "403 Forbidden", &text);
    }

    /// Whether a tunnel to a granted name may go on: when the client starts TLS, the server name
    /// its hello asks for (SNI) must be that name too — else one server behind many names (a
    /// CDN) would route it to another ("domain fronting"). A hello that cannot be read is
    /// refused; a client that sends no TLS (or nothing within a moment: a protocol where the
    /// server speaks first) goes on, to the granted name only. A tunnel to an address literal
    /// goes on whatever name it asks that address for. `rest` gets what was read.
    fn tunnel_may_open(
        &self,
        client: &mut TcpStream,
        request: &Request,
        rest: &mut Vec<u8>,
    ) -> bool {
        if request.host.parse::<std::net::IpAddr>().is_ok() {
            return true;
        }
        match read_hello(client, rest) {
            Hello::NotTls => true,
            Hello::Name(None) | Hello::Unreadable => {
                self.note(Denial::Host {
                    host: format!("(a TLS hello without a name readable, to {})", request.host),
                    port: request.port,
                });
                false
            }
            Hello::Name(Some(name)) => {
                let same = shellgate_core::policy::endpoint::Host::parse(&request.host)
                    .is_some_and(|h| h.admits(&name));
                if !same {
                    self.note(Denial::Host {
                        host: name,
                        port: request.port,
                    });
                }
                same
            }
        }
    }

    fn note(&self, denial: Denial) {
        let mut noted = self.denials.lock().unwrap_or_else(PoisonError::into_inner);
        if noted.len() < NOTED && !noted.contains(&denial) {
            noted.push(denial);
        }
    }
}

/// What a tunnel's first bytes are.
#[derive(Debug, PartialEq, Eq)]
enum Hello {
    /// Not a TLS handshake (or nothing came).
    NotTls,
    /// A TLS ClientHello, and the host name it asks for (`None`: it names none).
    Name(Option<String>),
    /// Something that starts as TLS but is no ClientHello this proxy can read whole.
    Unreadable,
}

/// How long a tunnel waits for the client's first bytes before it takes them for a protocol
/// where the server speaks first.
const FIRST_BYTES: Duration = Duration::from_secs(2);
/// The most bytes of a TLS hello read before it is given up on.
const HELLO_LIMIT: usize = 64 * 1024;

/// Reads the client's TLS hello into `bytes` (which may hold its start already), up to its end.
fn read_hello(client: &mut TcpStream, bytes: &mut Vec<u8>) -> Hello {
    let mut chunk = [0u8; 4096];
    loop {
        match hello_name(bytes) {
            Some(hello) => return hello,
            None if bytes.len() > HELLO_LIMIT => return Hello::Unreadable,
            None => {}
        }
        let wait = if bytes.is_empty() { FIRST_BYTES } else { WAIT };
        if client.set_read_timeout(Some(wait)).is_err() {
            return Hello::Unreadable;
        }
        let read = client.read(&mut chunk);
        drop(client.set_read_timeout(None));
        match read {
            Ok(0) => return Hello::Unreadable,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if bytes.is_empty() && e.kind() == io::ErrorKind::WouldBlock => {
                return Hello::NotTls;
            }
            Err(_) => return Hello::Unreadable,
        }
    }
}

/// The hello in `bytes` (`None`: more bytes are needed). TLS records (type 22, handshake) are
/// joined until the ClientHello they carry is whole (RFC 8446 §4.1.2, §5.1; the server name
/// extension, RFC 6066 §3).
fn hello_name(bytes: &[u8]) -> Option<Hello> {
    const HANDSHAKE: u8 = 22;
    const CLIENT_HELLO: u8 = 1;
    match bytes.first() {
        None => return None,
        Some(&HANDSHAKE) => {}
        Some(_) => return Some(Hello::NotTls),
    }
    let mut handshake = Vec::new();
    let mut at = 0;
    while let Some(header) = bytes.get(at..at + 5) {
        if header[0] != HANDSHAKE || header[1] != 3 {
            return Some(Hello::Unreadable);
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let fragment = bytes.get(at + 5..at + 5 + len)?;
        handshake.extend_from_slice(fragment);
        at += 5 + len;
        if let Some(head) = handshake.get(..4) {
            if head[0] != CLIENT_HELLO {
                return Some(Hello::Unreadable);
            }
            let need =
                4 + (usize::from(head[1]) << 16 | usize::from(head[2]) << 8 | usize::from(head[3]));
            if let Some(body) = handshake.get(4..need) {
                return Some(server_name(body).map_or(Hello::Unreadable, Hello::Name));
            }
        }
    }
    None
}

/// The host name a ClientHello's body asks for: `Some(None)` when it names none, `None` when
/// the body cannot be read.
fn server_name(body: &[u8]) -> Option<Option<String>> {
    let mut r = Reader(body);
    r.take(2 + 32)?; // version, random
    let session = usize::from(r.u8()?);
    r.take(session)?;
    let suites = usize::from(r.u16()?);
    r.take(suites)?;
    let compression = usize::from(r.u8()?);
    r.take(compression)?;
    if r.0.is_empty() {
        return Some(None);
    }
    let extensions = usize::from(r.u16()?);
    let mut ext = Reader(r.take(extensions)?);
    let mut found = None;
    while !ext.0.is_empty() {
        let kind = ext.u16()?;
        let len = usize::from(ext.u16()?);
        let data = ext.take(len)?;
        if kind != 0 {
            continue;
        }
        if found.is_some() {
            return None; // two server name extensions: not a hello to trust
        }
        let mut list = Reader(data);
        let list_len = usize::from(list.u16()?);
        let mut names = Reader(list.take(list_len)?);
        while !names.0.is_empty() {
            let name_type = names.u8()?;
            let len = usize::from(names.u16()?);
            let name = names.take(len)?;
            if name_type == 0 {
                if found.is_some() {
                    return None;
                }
                found = Some(std::str::from_utf8(name).ok()?.to_owned());
            }
        }
    }
    Some(found)
}

/// Reads big-endian fields off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = tail;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }
}

/// Reads up to the end of a request's head (`\r\n\r\n`), which starts with `first`: the
/// head, and what came after it.
fn read_head(client: &mut TcpStream, first: u8) -> io::Result<(Vec<u8>, Vec<u8>)> {
    client.set_read_timeout(Some(WAIT))?;
    let mut bytes = Vec::with_capacity(1024);
    bytes.push(first);
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
            forward: Some(origin_form(method, &path, version, headers, (&host, port))?),
            host,
            port,
        })
    }
}

/// A plain HTTP request as it goes to the host: its request line in origin form, its headers but
/// those about the connection to the proxy, and `Connection: close` — one request per connection,
/// so a second request cannot go to the same server for another name. A `Host` header must name
/// the URL's host (one server may serve many names).
fn origin_form(
    method: &str,
    path: &str,
    version: &str,
    headers: &str,
    (host, port): (&str, u16),
) -> Result<Vec<u8>, &'static str> {
    const DROPPED: [&str; 4] = [
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authorization",
    ];
    let mut out = format!("{method} {path} {version}\r\n");
    let mut hosts = 0;
    for header in headers.split("\r\n").filter(|h| !h.is_empty()) {
        let (name, value) = header.split_once(':').ok_or("a header without a colon")?;
        let name = name.trim().to_ascii_lowercase();
        if name == "host" {
            hosts += 1;
            let named = authority(value.trim(), Some(80));
            let same = named.is_some_and(|(h, p)| {
                p == port
                    && shellgate_core::policy::endpoint::Host::parse(host)
                        .is_some_and(|g| g.admits(&h))
            });
            if !same {
                return Err("the Host header names another host than the URL");
            }
        }
        if !DROPPED.contains(&name.as_str()) {
            out.push_str(header);
            out.push_str("\r\n");
        }
    }
    if hosts > 1 {
        return Err("more than one Host header");
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(out.into_bytes())
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

/// SOCKS5's side of the proxy (RFC 1928): the request, and the replies.
mod socks {
    use std::io::{Read, Write};
    use std::net::{Ipv4Addr, Ipv6Addr};

    pub const VERSION: u8 = 5;
    const NO_AUTHENTICATION: u8 = 0;
    const NO_ACCEPTABLE_METHOD: u8 = 0xff;
    const CONNECT: u8 = 1;
    pub const SUCCEEDED: u8 = 0;
    const GENERAL_FAILURE: u8 = 1;
    pub const NOT_ALLOWED: u8 = 2;
    const COMMAND_NOT_SUPPORTED: u8 = 7;
    const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 8;

    /// A reply with `code` (the bound address left zero: nothing is bound for the client).
    pub fn reply(code: u8) -> [u8; 10] {
        [VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]
    }

    /// After the version byte: the greeting (no authentication chosen) and a `CONNECT`
    /// request's host (a name as asked, or an address) and port. `None` (answered where the
    /// protocol has an answer) for anything else.
    pub fn request(client: &mut (impl Read + Write)) -> Option<(String, u16)> {
        let count = read::<1>(client)?[0];
        let mut methods = vec![0u8; usize::from(count)];
        client.read_exact(&mut methods).ok()?;
        if !methods.contains(&NO_AUTHENTICATION) {
            let _ = client.write_all(&[VERSION, NO_ACCEPTABLE_METHOD]);
            return None;
        }
        client.write_all(&[VERSION, NO_AUTHENTICATION]).ok()?;
        let [version, command, _, kind] = read::<4>(client)?;
        if version != VERSION {
            return None;
        }
        if command != CONNECT {
            let _ = client.write_all(&reply(COMMAND_NOT_SUPPORTED));
            return None;
        }
        let host = match kind {
            1 => Ipv4Addr::from(read::<4>(client)?).to_string(),
            4 => Ipv6Addr::from(read::<16>(client)?).to_string(),
            3 => {
                let length = read::<1>(client)?[0];
                let mut name = vec![0u8; usize::from(length)];
                client.read_exact(&mut name).ok()?;
                match host_name(name) {
                    Some(name) => name,
                    None => {
                        let _ = client.write_all(&reply(GENERAL_FAILURE));
                        return None;
                    }
                }
            }
            _ => {
                let _ = client.write_all(&reply(ADDRESS_TYPE_NOT_SUPPORTED));
                return None;
            }
        };
        let port = u16::from_be_bytes(read::<2>(client)?);
        if port == 0 {
            let _ = client.write_all(&reply(NOT_ALLOWED));
            return None;
        }
        Some((host, port))
    }

    /// A host name as DNS spells one: letters, digits, `-` and `.`, not empty.
    fn host_name(bytes: Vec<u8>) -> Option<String> {
        let name = String::from_utf8(bytes).ok()?;
        let plain = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
        plain.then_some(name)
    }

    fn read<const N: usize>(client: &mut impl Read) -> Option<[u8; N]> {
        let mut bytes = [0u8; N];
        client.read_exact(&mut bytes).ok()?;
        Some(bytes)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// A client's bytes to read, and what the proxy answered.
        struct Wire {
            input: std::io::Cursor<Vec<u8>>,
            output: Vec<u8>,
        }

        impl Read for Wire {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.input.read(buf)
            }
        }

        impl Write for Wire {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.output.write(buf)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }

        fn ask(bytes: &[u8]) -> (Option<(String, u16)>, Vec<u8>) {
            let mut wire = Wire {
                input: std::io::Cursor::new(bytes.to_vec()),
                output: Vec::new(),
            };
            (request(&mut wire), wire.output)
        }

        #[test]
        fn a_connect_names_its_host_and_port() {
            let name = b"registry.npmjs.org";
            let mut bytes = vec![1, 0, 5, 1, 0, 3, name.len() as u8];
            bytes.extend_from_slice(name);
            bytes.extend_from_slice(&443u16.to_be_bytes());
            let (asked, answered) = ask(&bytes);
            assert_eq!(asked, Some(("registry.npmjs.org".to_owned(), 443)));
            assert_eq!(answered, [5, 0]);
            let (asked, _) = ask(&[1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80]);
            assert_eq!(asked, Some(("127.0.0.1".to_owned(), 80)));
            let mut v6 = vec![1, 0, 5, 1, 0, 4];
            v6.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
            v6.extend_from_slice(&[0, 80]);
            assert_eq!(ask(&v6).0, Some(("::1".to_owned(), 80)));
        }

        #[test]
        fn anything_else_is_answered_and_refused() {
            // Only a password method offered.
            assert_eq!(ask(&[1, 2]), (None, vec![5, 0xff]));
            // BIND and UDP ASSOCIATE.
            for command in [2, 3] {
                let (asked, answered) = ask(&[1, 0, 5, command, 0, 1, 127, 0, 0, 1, 0, 80]);
                assert_eq!(asked, None);
                assert_eq!(answered[2..4], [5, COMMAND_NOT_SUPPORTED]);
            }
            // A name that is no host name, an unknown address type, port 0, a short request.
            let (asked, answered) = ask(&[1, 0, 5, 1, 0, 3, 3, b'a', b'/', b'b', 0, 80]);
            assert_eq!((asked, answered[3]), (None, GENERAL_FAILURE));
            let (asked, answered) = ask(&[1, 0, 5, 1, 0, 9, 0, 80]);
            assert_eq!((asked, answered[3]), (None, ADDRESS_TYPE_NOT_SUPPORTED));
            let (asked, answered) = ask(&[1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 0]);
            assert_eq!((asked, answered[3]), (None, NOT_ALLOWED));
            assert_eq!(ask(&[1, 0, 5, 1]).0, None);
        }
    }
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

/// Answers the client with `status` and a line of text (in one write), then closes.
fn answer(client: &mut TcpStream, status: &str, text: &str) {
    let body = format!("{text}\n");
    let whole = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    drop(client.write_all(whole.as_bytes()));
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

    /// A ClientHello body naming `name` (or none), wrapped in handshake records of at most
    /// `record` bytes each.
    fn hello(name: Option<&str>, record: usize) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend([7u8; 32]);
        body.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
        if let Some(name) = name {
            let n = name.len() as u16;
            let mut ext = vec![0, 0];
            ext.extend((n + 5).to_be_bytes());
            ext.extend((n + 3).to_be_bytes());
            ext.push(0);
            ext.extend(n.to_be_bytes());
            ext.extend(name.as_bytes());
            body.extend((ext.len() as u16).to_be_bytes());
            body.extend(ext);
        }
        let mut handshake = vec![1, 0];
        handshake.extend((body.len() as u16).to_be_bytes());
        handshake.extend(body);
        let mut out = Vec::new();
        for fragment in handshake.chunks(record) {
            out.extend([22, 3, 1]);
            out.extend((fragment.len() as u16).to_be_bytes());
            out.extend(fragment);
        }
        out
    }

    #[test]
    fn a_tls_hello_names_its_server() {
        let whole = hello(Some("granted.test"), 16384);
        assert_eq!(
            hello_name(&whole),
            Some(Hello::Name(Some("granted.test".into())))
        );
        // Split over records, and read as it arrives: more is needed until the last byte.
        let split = hello(Some("other.test"), 7);
        for end in 0..split.len() {
            assert_eq!(hello_name(&split[..end]), None, "{end}");
        }
        assert_eq!(
            hello_name(&split),
            Some(Hello::Name(Some("other.test".into())))
        );
        assert_eq!(hello_name(&hello(None, 100)), Some(Hello::Name(None)));
        assert_eq!(hello_name(b"SSH-2.0-x\r\n"), Some(Hello::NotTls));
        // A handshake that is no ClientHello, or a hello cut short inside: not read.
        let mut server_hello = hello(Some("x"), 16384);
        server_hello[5] = 2;
        assert_eq!(hello_name(&server_hello), Some(Hello::Unreadable));
        let mut short = hello(Some("granted.test"), 16384);
        short[8] -= 1; // the hello says it is one byte shorter than its extensions
        assert_eq!(hello_name(&short), Some(Hello::Unreadable));
    }

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
            Some(&b"GET /a?b HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"[..])
        );
        let bare = Request::parse(b"GET http://example.com:8080 HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(
            (bare.port, bare.forward.as_deref()),
            (
                8080,
                Some(&b"GET / HTTP/1.0\r\nConnection: close\r\n\r\n"[..])
            )
        );
        let query = Request::parse(b"GET http://h?q HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(
            query.forward.as_deref(),
            Some(&b"GET /?q HTTP/1.1\r\nConnection: close\r\n\r\n"[..])
        );
        for bad in [
            &b"CONNECT registry.npmjs.org HTTP/1.1\r\n\r\n"[..],
            b"CONNECT user@evil.com:443 HTTP/1.1\r\n\r\n",
            b"CONNECT evil.com:0 HTTP/1.1\r\n\r\n",
            b"GET /relative HTTP/1.1\r\n\r\n",
            b"GET https://example.com/ HTTP/1.1\r\n\r\n",
            b"GET http://u@evil.com/ HTTP/1.1\r\n\r\n",
            b"GET  http://example.com/ HTTP/1.1\r\n\r\n",
            b"GET http://example.com/ HTTP/1.1\r\nHost: evil.com\r\n\r\n",
            b"GET http://example.com/ HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
            b"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\nHost: evil.com\r\n\r\n",
        ] {
            assert!(
                Request::parse(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
