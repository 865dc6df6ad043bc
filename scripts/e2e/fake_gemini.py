#!/usr/bin/env python3
"""A scripted Gemini API (generativelanguage v1beta) on loopback for hookd's end-to-end test with
Gemini CLI (point it here with GOOGLE_GEMINI_BASE_URL and a fake GEMINI_API_KEY).

A prompt containing RUNTOOL gets `run_shell_command` calls, one per turn: the commands in the
file $FAKE_TOOL_COMMAND_FILE names (a JSON list of commands or of argument objects with
`command` and `dir_path`, or one command as plain text; read
at each request, so one server serves several scenarios), else `echo ok-tool`. After the last
command's result comes back, or for any other prompt, the answer is plain text. Requests that
ask for JSON (Gemini CLI's routing and next-speaker checks) get a JSON object. Every function
response is logged to stderr; --dump appends each request body to a file.
Serves 127.0.0.1 only, stops after --max-requests requests or --seconds seconds.
"""
import argparse, json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def tool_commands():
    path = os.environ.get("FAKE_TOOL_COMMAND_FILE")
    if path and os.path.exists(path):
        text = open(path).read().strip()
        return json.loads(text) if text.startswith("[") else [text]
    return ["echo ok-tool"]

def parts_of(body, role):
    return [p for c in body.get("contents", []) if c.get("role") == role for p in c.get("parts", [])]

def answer(body):
    config = body.get("generationConfig", {})
    if config.get("responseMimeType") == "application/json" or config.get("responseJsonSchema") or config.get("responseSchema"):
        return [{"text": json.dumps({"reasoning": "scripted", "next_speaker": "user", "model_choice": "flash",
                                     "complexity_reasoning": "scripted", "complexity_score": 1})}]
    user = parts_of(body, "user")
    results = [p["functionResponse"] for p in user if "functionResponse" in p]
    if results:
        sys.stderr.write("fake-gemini: function_response " + json.dumps(results[-1]) + "\n")
    if not any("RUNTOOL" in str(p.get("text", "")) for p in user):
        return [{"text": "ok"}]
    commands = tool_commands()
    if len(results) < len(commands):
        # An entry is the command, or the call's arguments (`{"command": …, "dir_path": …}`).
        call = commands[len(results)]
        args = dict(call) if isinstance(call, dict) else {"command": call}
        args.setdefault("description", "run")
        return [{"functionCall": {"name": "run_shell_command", "args": args}}]
    return [{"text": "done"}]

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, fmt, *args):
        sys.stderr.write("fake-gemini: " + (fmt % args) + "\n")
    def send(self, code, payload, ctype="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self.send(200, {})
    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(n) or b"{}")
        self.server.count += 1
        if self.server.dump:
            open(self.server.dump, "a").write(json.dumps(body) + "\n")
        if ":countTokens" in self.path:
            return self.send(200, {"totalTokens": 10})
        if ":embedContent" in self.path or ":batchEmbedContents" in self.path:
            return self.send(200, {"embeddings": [{"values": [0.0]}]})
        if "generatecontent" not in self.path.lower():
            return self.send(200, {})
        response = {"candidates": [{"content": {"role": "model", "parts": answer(body)},
                                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                    "modelVersion": "gemini-2.5-pro"}
        if "streamGenerateContent" not in self.path:
            return self.send(200, response)
        self.send(200, f"data: {json.dumps(response)}\r\n\r\n".encode(), "text/event-stream")

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--max-requests", type=int, default=400)
    ap.add_argument("--seconds", type=int, default=600)
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
