#!/usr/bin/env python3
"""Fake hosted agent services for Switchboard tests (Python 3 standard library only).

Everything tests/fakes/fake_agents.py serves (Dify, n8n, the /_control endpoints and scripting),
plus, on the same loopback server:

    Langflow   base http://127.0.0.1:PORT   (docs.langflow.org, "Flow trigger endpoints")
        POST /api/v1/run/<flow>?stream=false|true
          header "x-api-key: lf-test-key" (else 403 {"detail": ...}, as Langflow answers)
          flows: "echo-flow" answers "echo(<turn>): <input_value>", <turn> counting the
                 messages of the request's session_id; "fail-flow" fails (500 {"detail"} when
                 blocking, an {"event":"error"} when streaming); any other: 404 {"detail"}.
          stream=false: a RunResponse {"session_id", "outputs":[{"inputs", "outputs":[{"results":
                 {"message": {"text", "sender": "Machine", "session_id", ...}}, ...}]}]}
          stream=true: text/event-stream of JSON objects each followed by a blank line:
                 add_message (User), add_message (Machine), token x3 ({"chunk"}), end
                 ({"result": RunResponse}).

    Coze       base http://127.0.0.1:PORT   (chat API v3, as coze-dev/coze-py speaks it)
        POST /v3/chat[?conversation_id=<id>]   header "Authorization: Bearer pat-coze-test"
          (else HTTP 401 {"code": 4100, "msg"}); body {bot_id, user_id, stream,
          auto_save_history, additional_messages: [{role, content, content_type}]}
          bots: "bot-echo" answers "echo(<turn>): <text>", <turn> counting the user messages the
                conversation saved (auto_save_history false saves none); "bot-fail" streams
                conversation.chat.failed (last_error 5000); any other: HTTP 200 with
                application/json {"code": 4200, "msg"} instead of a stream, as Coze does.
          An unknown conversation_id: {"code": 4200}. A new conversation gets a numeric id.
          stream=true: text/event-stream "event:<name>\ndata:<json>\n\n": conversation.chat.
                created, conversation.chat.in_progress, conversation.message.delta x3 (type
                answer), conversation.message.completed (answer, then a verbose one),
                conversation.chat.completed (usage), done ("[DONE]").
          stream=false: {"code": 0, "msg": "", "data": <chat, status in_progress>}.

    DashScope  base http://127.0.0.1:PORT/api/v1   (Model Studio application completion, as
               dashscope/dashscope-sdk-python speaks it)
        POST /api/v1/apps/<app>/completion   header "Authorization: Bearer sk-ds-test" (else
          401 {"code": "InvalidApiKey", "message", "request_id"}); body {input: {prompt,
          session_id?, biz_params?}, parameters: {incremental_output, flow_stream_mode?}}
          apps: "app-agent" answers "echo(<turn>): <prompt>" (<turn> counting the session's
                messages; a prompt with "cite" gets "<ref>[1]</ref>" and a doc_reference
                handbook.pdf); "app-workflow" the same as workflow_message contents;
                "app-fail" streams an error event (InternalError); others 404 NotFound.
          "X-DashScope-SSE: enable": SSE "id:<n>\nevent:result\n:HTTP_STATUS/200\ndata:<json>"
                with output.text pieces (finish_reason "null"), the last "stop" with usage.
          without it: one JSON {output: {text, finish_reason, session_id}, usage, request_id}.

    Tbox       base http://127.0.0.1:PORT   (Ant Group Tbox/百宝箱 open API "对话型智能体", as the
               official tboxsdk Python package speaks it: tboxsdk/tbox.py, core/httpclient.py,
               model/message.py)
        POST /api/chat   header "Authorization: tbox-test-token" (the token itself, no "Bearer";
          else HTTP 401 {"errorCode", "errorMsg", "traceId"}); body {appId, query, userId,
          stream?=true, conversationId?, searchEngine?, files?} (appId, query, userId required:
          else HTTP 400 {"errorCode": "PARAM_ERROR", ...})
          apps: "app-echo" answers "echo(<turn>): <query>", <turn> counting the messages of the
                conversation (a new one unless a known conversationId is given; an unknown one:
                HTTP 200 application/json {"errorCode": "CONVERSATION_NOT_FOUND", ...});
                "app-fail" sends a header, one chunk, then an SSE "error" event
                {"errorCode", "description"} (the SDK raises with its description);
                any other: HTTP 200 application/json {"errorCode": "APP_NOT_FOUND", "errorMsg"}
                instead of a stream (the SDK raises on a JSON answer to a stream).
          stream=true: text/event-stream of "event:message\ndata:<json>\n\n" objects {"type",
                "lane", "payload"} whose payload is itself JSON text: "meta", "header"
                ({mediaType: "text", requestId, sessionId, extraParams}) and "chunk" x3
                ({conversationId, messageId, text}); no "end" message (LangBot 4.9.5 notes the
                live service sends none; the SDK knows the type).
          stream=false: {"errorCode": "0", "errorMsg": "success", "data": {conversationId,
                messageId, result: [{lane, mediaType: "text", chunk: <answer>}]}, "traceId"}.

Command line: python3 fake_hosted_agents.py [--port 0]; prints "FAKE_AGENTS_PORT=<port>".
"""

import json
import sys
import time
import uuid

import fake_agents
from fake_agents import Reply, _dumps, _split3, json_reply

LANGFLOW_KEY = "lf-test-key"
COZE_TOKEN = "pat-coze-test"
DASHSCOPE_KEY = "sk-ds-test"
TBOX_TOKEN = "tbox-test-token"


def event_line(obj):
    return (_dumps(obj) + "\n\n").encode("utf-8")


class HostedFake(fake_agents.Fake):
    def __init__(self):
        fake_agents.Fake.__init__(self)
        self.sessions = {}  # (service, session id) -> turns so far
        self.next_id = 7400000000000000000

    def reset(self):
        fake_agents.Fake.reset(self)
        with self.lock:
            self.sessions = {}

    def turn(self, service, session):
        with self.lock:
            n = self.sessions.get((service, session), 0) + 1
            self.sessions[(service, session)] = n
            return n

    def route(self, method, path, headers, raw, query=None):
        query = query or {}
        if path.startswith("/api/v1/apps/") and path.endswith("/completion"):
            return self.dashscope(method, path[len("/api/v1/apps/"):-len("/completion")],
                                  headers, raw)
        if path == "/v3/chat":
            return self.coze(method, headers, raw, query)
        if path == "/api/chat":
            return self.tbox(method, headers, raw)
        if path.startswith("/api/v1/run/"):
            return self.langflow(method, path[len("/api/v1/run/"):], headers, raw, query)
        return fake_agents.Fake.route(self, method, path, headers, raw, query)

    # -- Langflow -----------------------------------------------------------------------------
    def langflow(self, method, flow, headers, raw, query):
        if method != "POST":
            return json_reply(405, {"detail": "Method Not Allowed"})
        if headers.get("x-api-key") != LANGFLOW_KEY:
            return json_reply(403, {"detail": "An API key must be passed as query or header"})
        if flow not in ("echo-flow", "fail-flow"):
            return json_reply(404, {"detail": "Flow identifier %s not found" % flow})
        try:
            body = json.loads(raw or b"{}")
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            return json_reply(422, {"detail": [{"msg": "body must be a JSON object"}]})
        stream = query.get("stream", "false").lower() == "true"
        text = body.get("input_value") or ""
        session = body.get("session_id") or flow
        if flow == "fail-flow":
            if stream:
                return Reply(200, content_type="text/event-stream", events=[event_line(
                    {"event": "error", "data": {"error": "The flow failed: component error"}})])
            return json_reply(500, {"detail": "The flow failed: component error"})
        answer = "echo(%d): %s" % (self.turn("langflow", session), text)
        message_id = str(uuid.uuid4())
        message = {"text": answer, "sender": "Machine", "sender_name": "AI",
                   "session_id": session, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
                   "flow_id": flow, "files": [], "error": False}
        result = {"session_id": session, "outputs": [{
            "inputs": {"input_value": text},
            "outputs": [{"results": {"message": message},
                         "artifacts": {"message": answer, "sender": "Machine", "files": []},
                         "outputs": {"message": {"message": answer, "type": "text"}},
                         "logs": {"message": []}, "messages": [], "component_display_name":
                         "Chat Output", "component_id": "ChatOutput-1"}]}]}
        if not stream:
            return json_reply(200, result)
        events = [
            event_line({"event": "add_message", "data": {"sender": "User", "text": text,
                                                          "session_id": session}}),
            event_line({"event": "add_message", "data": {"sender": "Machine", "text": "",
                                                          "session_id": session,
                                                          "id": message_id}}),
        ]
        for piece in _split3(answer):
            events.append(event_line({"event": "token", "data": {"chunk": piece,
                                                                  "id": message_id}}))
        events.append(event_line({"event": "end", "data": {"result": result}}))
        return Reply(200, content_type="text/event-stream", events=events)

    # -- Coze ---------------------------------------------------------------------------------
    def new_id(self):
        with self.lock:
            self.next_id += 1
            return str(self.next_id)

    def coze(self, method, headers, raw, query):
        if method != "POST":
            return json_reply(405, {"code": 4000, "msg": "method not allowed"})
        if headers.get("authorization") != "Bearer " + COZE_TOKEN:
            return json_reply(401, {"code": 4100, "msg": "authentication is invalid"})
        try:
            body = json.loads(raw or b"{}")
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            return json_reply(200, {"code": 4000, "msg": "json fail"})
        bot = body.get("bot_id")
        if bot not in ("bot-echo", "bot-fail"):
            return json_reply(200, {"code": 4200, "msg": "bot %s not found" % bot})
        conversation = query.get("conversation_id")
        if conversation:
            with self.lock:
                known = ("coze", conversation) in self.sessions
            if not known:
                return json_reply(200, {"code": 4200, "msg": "conversation not found"})
        else:
            conversation = self.new_id()
            with self.lock:
                self.sessions[("coze", conversation)] = 0
        text = ""
        for message in body.get("additional_messages") or []:
            if message.get("role") == "user":
                text = message.get("content", "")
                if message.get("content_type") == "object_string":
                    parts = json.loads(text)
                    text = " ".join(p.get("text") or p.get("file_url", "") for p in parts)
        if body.get("auto_save_history", True):
            turn = self.turn("coze", conversation)
        else:
            with self.lock:
                turn = self.sessions[("coze", conversation)] + 1
        chat = {"id": self.new_id(), "conversation_id": conversation, "bot_id": bot,
                "created_at": int(time.time()), "last_error": {"code": 0, "msg": ""},
                "status": "created", "usage": {"token_count": 0, "output_count": 0,
                                               "input_count": 0},
                "section_id": conversation}
        if not body.get("stream"):
            return json_reply(200, {"code": 0, "msg": "", "data": dict(chat, status="in_progress")})

        def ev(name, data):
            return ("event:%s\ndata:%s\n\n" % (name, _dumps(data))).encode("utf-8")
        events = [ev("conversation.chat.created", chat),
                  ev("conversation.chat.in_progress", dict(chat, status="in_progress"))]
        if bot == "bot-fail":
            events.append(ev("conversation.chat.failed", dict(
                chat, status="failed", last_error={"code": 5000, "msg": "event interval error"})))
            return Reply(200, content_type="text/event-stream", events=events)
        answer = "echo(%d): %s" % (turn, text)
        message = {"id": self.new_id(), "conversation_id": conversation, "bot_id": bot,
                   "role": "assistant", "type": "answer", "content_type": "text",
                   "chat_id": chat["id"], "section_id": conversation}
        for piece in _split3(answer):
            events.append(ev("conversation.message.delta", dict(message, content=piece)))
        events.append(ev("conversation.message.completed", dict(message, content=answer)))
        events.append(ev("conversation.message.completed", dict(
            message, id=self.new_id(), type="verbose",
            content=_dumps({"msg_type": "generate_answer_finish", "data": ""}))))
        events.append(ev("conversation.chat.completed", dict(
            chat, status="completed", completed_at=int(time.time()),
            usage={"token_count": 30, "output_count": 10, "input_count": 20})))
        events.append(ev("done", "[DONE]"))
        return Reply(200, content_type="text/event-stream", events=events)

    # -- DashScope ----------------------------------------------------------------------------
    def dashscope(self, method, app, headers, raw):
        request_id = str(uuid.uuid4())
        if headers.get("authorization") != "Bearer " + DASHSCOPE_KEY:
            return json_reply(401, {"code": "InvalidApiKey", "message":
                                    "Invalid API-key provided.", "request_id": request_id})
        if app not in ("app-agent", "app-workflow", "app-fail"):
            return json_reply(404, {"code": "NotFound", "message": "App not found.",
                                    "request_id": request_id})
        try:
            body = json.loads(raw or b"{}")
            prompt = body["input"]["prompt"]
        except (ValueError, KeyError, TypeError):
            return json_reply(400, {"code": "InvalidParameter", "message":
                                    "input.prompt is required", "request_id": request_id})
        session = body["input"].get("session_id") or uuid.uuid4().hex
        stream = headers.get("x-dashscope-sse") == "enable"
        if app == "app-fail":
            if not stream:
                return json_reply(500, {"code": "InternalError", "message":
                                        "The app failed.", "request_id": request_id})
            return Reply(200, content_type="text/event-stream", events=[(
                "id:1\nevent:error\n:HTTP_STATUS/500\ndata:%s\n\n" % _dumps(
                    {"code": "InternalError", "message": "The app failed.",
                     "request_id": request_id})).encode("utf-8")])
        answer = "echo(%d): %s" % (self.turn("dashscope", session), prompt)
        refs = []
        if "cite" in prompt:
            answer += " <ref>[1]</ref>"
            refs = [{"index_id": "1", "title": "Handbook", "doc_name": "handbook.pdf"}]
        usage = {"models": [{"model_id": "qwen-plus", "input_tokens": 12, "output_tokens": 8}]}
        if not stream:
            return json_reply(200, {"output": {"text": answer, "finish_reason": "stop",
                                               "session_id": session, "doc_references": refs},
                                    "usage": usage, "request_id": request_id})
        events = []
        pieces = _split3(answer)
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            output = {"session_id": session, "finish_reason": "stop" if last else "null"}
            if app == "app-workflow":
                output["workflow_message"] = {"node_id": "End_1", "node_name": "End",
                                              "node_type": "End", "node_status": "executing",
                                              "node_is_completed": last,
                                              "message": {"role": "assistant",
                                                          "content": piece}}
            else:
                output["text"] = piece
            if last:
                output["doc_references"] = refs
            data = {"output": output, "request_id": request_id}
            if last:
                data["usage"] = usage
            events.append(("id:%d\nevent:result\n:HTTP_STATUS/200\ndata:%s\n\n" % (
                i + 1, _dumps(data))).encode("utf-8"))
        return Reply(200, content_type="text/event-stream", events=events)


    # -- Tbox ---------------------------------------------------------------------------------
    def tbox(self, method, headers, raw):
        trace = uuid.uuid4().hex

        def failure(status, code, msg):
            return json_reply(status, {"errorCode": code, "errorMsg": msg, "traceId": trace})
        if method != "POST":
            return failure(405, "METHOD_NOT_ALLOWED", "method not allowed")
        if headers.get("authorization") != TBOX_TOKEN:
            return failure(401, "AUTH_FAILED", "the authorization token is invalid")
        try:
            body = json.loads(raw or b"{}")
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            return failure(400, "PARAM_ERROR", "the body must be a JSON object")
        missing = [k for k in ("appId", "query", "userId") if not body.get(k)]
        if missing:
            return failure(400, "PARAM_ERROR", "missing " + ", ".join(missing))
        app = body["appId"]
        if app not in ("app-echo", "app-fail"):
            return failure(200, "APP_NOT_FOUND", "app %s does not exist or is not published" % app)
        conversation = body.get("conversationId")
        if conversation:
            with self.lock:
                known = ("tbox", conversation) in self.sessions
            if not known:
                return failure(200, "CONVERSATION_NOT_FOUND", "conversation does not exist")
        else:
            conversation = time.strftime("%Y%m%d") + "tBI" + self.new_id()[-9:]
            with self.lock:
                self.sessions[("tbox", conversation)] = 0
        answer = "echo(%d): %s" % (self.turn("tbox", conversation), body["query"])
        message_id = time.strftime("%Y%m%d") + "TB" + self.new_id()[-10:]
        if body.get("stream", True) is False:
            if app == "app-fail":
                return failure(200, "AGENT_EXECUTE_FAILED", "the agent failed")
            return json_reply(200, {"errorCode": "0", "errorMsg": "success", "traceId": trace,
                                    "data": {"conversationId": conversation,
                                             "messageId": message_id,
                                             "result": [{"lane": "default", "mediaType": "text",
                                                         "chunk": answer}]}})

        def message(obj):
            return ("event:message\ndata:%s\n\n" % _dumps(obj)).encode("utf-8")
        events = [message({"type": "meta", "payload": _dumps({"requestId": trace})}),
                  message({"lane": "default", "type": "header",
                           "entity": {"node_type": "output", "node_name": "output"},
                           "payload": _dumps({"mediaType": "text", "requestId": trace,
                                              "sessionId": conversation, "extraParams": {}})})]
        pieces = _split3(answer)
        if app == "app-fail":
            pieces = pieces[:1]
        for piece in pieces:
            events.append(message({"lane": "default", "type": "chunk", "payload": _dumps(
                {"conversationId": conversation, "messageId": message_id, "text": piece})}))
        if app == "app-fail":
            events.append(("event:error\ndata:%s\n\n" % _dumps(
                {"errorCode": "AGENT_EXECUTE_FAILED", "description": "the agent failed",
                 "traceId": trace})).encode("utf-8"))
        return Reply(200, content_type="text/event-stream", events=events)

if __name__ == "__main__":
    sys.exit(fake_agents.main(fake_class=HostedFake))
