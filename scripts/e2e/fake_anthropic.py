#!/usr/bin/env python3
"""A scripted Anthropic Messages API on loopback for hookd's end-to-end test with Claude Code.

A prompt containing RUNTOOL gets Bash tool calls, one per turn: `echo ok-tool`, or the commands
in the file $FAKE_TOOL_COMMAND_FILE names (a JSON list of commands, or one command as plain
text); once the last command's result comes back, or for any other prompt, the answer is plain
text. Every request is logged to stderr.
Serves 127.0.0.1 only, stops after --max-requests requests or --seconds seconds.
"""
import argparse, json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def blocks_of(message):
    content = message.get("content", "")
    return content if isinstance(content, list) else [{"type": "text", "text": content}]

def tool_commands():
    """The Bash commands to ask for: $FAKE_TOOL_COMMAND_FILE's when that file exists (read at
    each request, so one server serves several scenarios), else `echo ok-tool`."""
    path = os.environ.get("FAKE_TOOL_COMMAND_FILE")
    if path and os.path.exists(path):
        text = open(path).read().strip()
        return json.loads(text) if text.startswith("[") else [text]
    return ["echo ok-tool"]

def answer(body):
    """Claude Code puts reminders and the prompt in several blocks and messages: look at all."""
    blocks = [b for m in body.get("messages", []) if m.get("role") == "user" for b in blocks_of(m)]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if results:
        sys.stderr.write("fake-anthropic: tool_result " + json.dumps(results[-1]) + "\n")
    if not any("RUNTOOL" in str(b.get("text", "")) for b in blocks):
        return [{"type": "text", "text": "ok"}], "end_turn"
    commands = tool_commands()
    if len(results) < len(commands):
        return [{"type": "tool_use", "id": f"toolu_{len(results) + 1:02}", "name": "Bash",
                 "input": {"command": commands[len(results)],
                           "description": "run"}}], "tool_use"
    return [{"type": "text", "text": "done"}], "end_turn"

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, fmt, *args):
        sys.stderr.write("fake-anthropic: " + (fmt % args) + "\n")
    def send(self, code, payload, ctype="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self.send(200, {})
    def do_HEAD(self):
        self.send(200, b"")
    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(n) or b"{}")
        self.server.count += 1
        if self.server.dump:
            open(self.server.dump, "a").write(json.dumps(body) + "\n")
        if "count_tokens" in self.path:
            return self.send(200, {"input_tokens": 10})
        if not self.path.startswith("/v1/messages"):
            return self.send(200, {})
        blocks, stop = answer(body)
        model = body.get("model", "claude-test")
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {"id": f"msg_{self.server.count}", "type": "message", "role": "assistant", "model": model,
                   "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            return self.send(200, message)
        events = [("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                           ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}})]
            else:
                events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": {**b, "input": {}}}),
                           ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}})]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}),
                   ("message_stop", {"type": "message_stop"})]
        data = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()
        self.send(200, data, "text/event-stream")

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--max-requests", type=int, default=200)
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--dump", help="append each request body to this file")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.count = 0
    srv.dump = a.dump
    open(a.port_file, "w").write(str(srv.server_address[1]))
    deadline = time.time() + a.seconds
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    while time.time() < deadline and srv.count < a.max_requests:
        time.sleep(0.2)
    srv.shutdown()

if __name__ == "__main__":
    main()
