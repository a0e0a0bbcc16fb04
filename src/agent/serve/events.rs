//! Server-sent events over a tiny_http connection: the status line and headers written by
//! hand, then one HTTP/1.1 chunk per `data:` event, flushed at once so that a client sees
//! each token as it is sampled.

use serde_json::Value;
use std::io::Write;
use tiny_http::Request;

/// An open `text/event-stream` reply.
pub struct EventStream {
    writer: Box<dyn Write + Send>,
    open: bool,
}

impl EventStream {
    /// Answers `request` with 200 and the event-stream headers.
    pub fn start(request: Request) -> Self {
        let mut writer = request.into_writer();
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
        let open = writer.write_all(head.as_bytes()).is_ok() && writer.flush().is_ok();
        Self { writer, open }
    }

    /// Sends one event with JSON data; false once the client has gone.
    pub fn send(&mut self, data: &Value) -> bool {
        self.event(&data.to_string())
    }

    /// Sends `data: [DONE]` and ends the reply.
    pub fn end(mut self) {
        if self.event("[DONE]") {
            let _ = self.writer.write_all(b"0\r\n\r\n");
            let _ = self.writer.flush();
        }
    }

    fn event(&mut self, data: &str) -> bool {
        if !self.open {
            return false;
        }
        let event = format!("data: {data}\n\n");
        let chunk = format!("{:x}\r\n{event}\r\n", event.len());
        self.open = self.writer.write_all(chunk.as_bytes()).is_ok() && self.writer.flush().is_ok();
        self.open
    }
}
