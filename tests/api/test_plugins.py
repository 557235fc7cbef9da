"""Plugins end to end with the real binary and the fake marketplace (tests/fakes/
fake_marketplace.py) serving the example plugin (examples/plugins/greeter): install as a task,
listed and running, config validated and applied, upgrade keeping config, delete, local packages,
bad packages refused with the reason in the task, and plugins surviving a restart."""

import base64
import io
import json
import os
import sys
import time
import unittest
import zipfile

from harness import ServerTestCase, unknown_uuid
from fake_clients import CallbackReceiver, FakeProvider, sign, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakes"))
import fake_marketplace  # noqa: E402

GREETER = os.path.abspath(os.path.join(HERE, "..", "..", "examples", "plugins", "greeter"))
HOSTILE = os.path.abspath(os.path.join(HERE, "..", "plugins", "hostile"))


def zip_dir(path, overrides=None, extra=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for root, _, files in os.walk(path):
            for f in files:
                full = os.path.join(root, f)
                rel = os.path.relpath(full, path)
                with open(full, "rb") as f:
                    data = f.read()
                if rel == "manifest.yaml" and overrides:
                    text = data.decode()
                    for old, new in overrides.items():
                        text = text.replace(old, new)
                    data = text.encode()
                z.writestr(rel, data)
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buf.getvalue()


class PluginCase(ServerTestCase):
    market = None
    extra_env = {}  # more server environment for a subclass

    @classmethod
    def setUpClass(cls):
        cls.market = fake_marketplace.start()
        cls.server_env = dict(cls.extra_env, SPACE__URL="http://127.0.0.1:%d" % cls.market.port)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.market.stop()

    def control(self, path, body):
        import urllib.request
        req = urllib.request.Request("http://127.0.0.1:%d/_control/%s" % (self.market.port, path),
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"{}")

    def publish(self, author, name, version, package, checksum=True):
        self.control("publish", {"author": author, "name": name, "version": version,
                                 "package_base64": base64.b64encode(package).decode(),
                                 "checksum": checksum})

    def greeter(self, version="1.0.0", name="greeter", author="switchboard"):
        return zip_dir(GREETER, {"version: 1.0.0": "version: " + version,
                                 "name: greeter": "name: " + name,
                                 "author: switchboard": "author: " + author})

    def wait_task(self, task_id, timeout=30):
        def done():
            task = self.ok("GET", "/api/v1/system/tasks/%d" % task_id)["task"]
            return task if task["status"] in ("succeeded", "failed") else None
        task = wait_until(done, timeout)
        self.assertTrue(task, "task %d did not end" % task_id)
        return task

    def install(self, plugin_id, **extra):
        body = {"plugin_id": plugin_id}
        body.update(extra)
        task_id = self.ok("POST", "/api/v1/plugins/install/marketplace", body)["task_id"]
        self.assertIsInstance(task_id, int)
        return self.wait_task(task_id)

    def plugin(self, plugin_id):
        return self.ok("GET", "/api/v1/plugins/" + plugin_id)["plugin"]

    def delete(self, plugin_id):
        task_id = self.ok("DELETE", "/api/v1/plugins/" + plugin_id)["task_id"]
        return self.wait_task(task_id)


class PluginLifecycleTest(PluginCase):

    def test_install_lists_runs_and_takes_config(self):
        self.publish("switchboard", "greeter", "1.0.0", self.greeter())
        task = self.install("switchboard/greeter")
        self.assertEqual(task["status"], "succeeded", task)
        self.assertEqual(task["kind"], "plugin-install")
        self.assertGreater(task["task_context"]["metadata"]["downloaded_bytes"], 0)
        plugin = self.plugin("switchboard/greeter")
        self.assertEqual(plugin["version"], "1.0.0")
        self.assertEqual(plugin["status"], "running", plugin)
        self.assertEqual(plugin["capabilities"]["commands"][0]["name"], "greet")
        self.assertEqual(plugin["label"], {"en_US": "Greeter"})
        listed = self.ok("GET", "/api/v1/plugins")["plugins"]
        self.assertIn("switchboard/greeter", [p["plugin_id"] for p in listed])
        self.assertEqual(self.ok("GET", "/api/v1/plugins/switchboard/greeter/config")["config"],
                         {"greeting": "Hello", "trigger": "hi"})
        self.assertIn("Greeter", self.ok("GET", "/api/v1/plugins/switchboard/greeter/readme")
                      ["readme"])

        status, resp, _ = self.as_user("PUT", "/api/v1/plugins/switchboard/greeter/config",
                                       {"greeting": 5})
        self.assertError(status, resp, 400, "config.greeting")
        self.ok("PUT", "/api/v1/plugins/switchboard/greeter/config",
                {"greeting": "Howdy", "trigger": "hey"})
        self.assertEqual(self.ok("GET", "/api/v1/plugins/switchboard/greeter/config")["config"],
                         {"greeting": "Howdy", "trigger": "hey"})
        self.assertTrue(wait_until(
            lambda: self.plugin("switchboard/greeter")["status"] == "running", 10))

        self.ok("PUT", "/api/v1/plugins/switchboard/greeter/enabled", {"enabled": False})
        self.assertTrue(wait_until(
            lambda: self.plugin("switchboard/greeter")["status"] == "stopped", 10))
        self.ok("PUT", "/api/v1/plugins/switchboard/greeter/enabled", {"enabled": True})
        self.assertTrue(wait_until(
            lambda: self.plugin("switchboard/greeter")["status"] == "running", 10))

        # Installed already: 409; and the other plugin routes answer 404 for unknown plugins.
        status, resp, _ = self.as_user("POST", "/api/v1/plugins/install/marketplace",
                                       {"plugin_id": "switchboard/greeter"})
        self.assertError(status, resp, 409, "installed already")
        for method, path in (("GET", "/api/v1/plugins/nobody/nothing"),
                             ("GET", "/api/v1/plugins/nobody/nothing/config"),
                             ("POST", "/api/v1/plugins/nobody/nothing/upgrade"),
                             ("DELETE", "/api/v1/plugins/nobody/nothing")):
            status, resp, _ = self.as_user(method, path, {} if method == "POST" else None)
            self.assertError(status, resp, 404, "not installed")

        task = self.delete("switchboard/greeter")
        self.assertEqual(task["status"], "succeeded", task)
        status, resp, _ = self.as_user("GET", "/api/v1/plugins/switchboard/greeter")
        self.assertError(status, resp, 404)

    def test_langbot_fields_and_request_errors(self):
        self.publish("switchboard", "hello2", "0.3.0", self.greeter("0.3.0", name="hello2"))
        task_id = self.ok("POST", "/api/v1/plugins/install/marketplace",
                          {"plugin_author": "switchboard", "plugin_name": "hello2",
                           "plugin_version": "0.3.0"})["task_id"]
        self.assertEqual(self.wait_task(task_id)["status"], "succeeded")
        self.assertEqual(self.plugin("switchboard/hello2")["version"], "0.3.0")
        for body, fragment in (({}, "plugin_id is required"),
                               ({"plugin_id": "no-slash"}, "plugin_id"),
                               ({"plugin_id": "a/b/c"}, "plugin_id"),
                               ({"plugin_id": "../x"}, "author and name"),
                               ({"plugin_id": 5}, "plugin_id")):
            status, resp, _ = self.as_user("POST", "/api/v1/plugins/install/marketplace", body)
            self.assertError(status, resp, 400, fragment)
        task = self.install("nobody/missing")
        self.assertEqual(task["status"], "failed")
        self.assertIn("not in the marketplace", task["runtime"]["exception"])
        self.delete("switchboard/hello2")

    def test_upgrade_keeps_config_and_a_failed_upgrade_keeps_the_old_version(self):
        self.publish("switchboard", "up", "1.0.0", self.greeter("1.0.0", name="up"))
        self.assertEqual(self.install("switchboard/up")["status"], "succeeded")
        self.ok("PUT", "/api/v1/plugins/switchboard/up/config", {"greeting": "Yo"})
        self.publish("switchboard", "up", "2.0.0", self.greeter("2.0.0", name="up"))
        task_id = self.ok("POST", "/api/v1/plugins/switchboard/up/upgrade")["task_id"]
        task = self.wait_task(task_id)
        self.assertEqual(task["status"], "succeeded", task)
        plugin = self.plugin("switchboard/up")
        self.assertEqual(plugin["version"], "2.0.0")
        self.assertEqual(plugin["config"]["greeting"], "Yo")
        self.assertEqual(plugin["config"]["trigger"], "hi")
        self.assertTrue(wait_until(lambda: self.plugin("switchboard/up")["status"] == "running"))

        # 3.0.0 cannot start (its script ends before the handshake): 2.0.0 keeps running.
        broken = zip_dir(GREETER, {"version: 1.0.0": "version: 3.0.0", "name: greeter": "name: up",
                                   "[python3, main.py]": "[python3, quit.py]"},
                         extra={"quit.py": "raise SystemExit(3)\n"})
        self.publish("switchboard", "up", "3.0.0", broken)
        task = self.wait_task(self.ok("POST", "/api/v1/plugins/switchboard/up/upgrade")["task_id"])
        self.assertEqual(task["status"], "failed")
        self.assertIn("launch failed", task["runtime"]["exception"])
        self.assertIn("version 2.0.0 keeps running", task["runtime"]["exception"])
        plugin = self.plugin("switchboard/up")
        self.assertEqual(plugin["version"], "2.0.0")
        self.assertEqual(plugin["status"], "running")
        self.delete("switchboard/up")

    def test_bad_packages_are_refused_with_the_reason(self):
        cases = [
            ("badsum", self.greeter(name="badsum"), "0" * 64, "checksum mismatch"),
            ("impostor", self.greeter(), True, "names switchboard/greeter instead of"),
            ("slip", zip_dir(GREETER, {"name: greeter": "name: slip"},
                             {"../../evil.sh": "echo pwned"}), True, "leaves the plugin's folder"),
            ("notzip", b"this is not a zip", True, "not a zip file"),
            # A zip bomb: 101 MiB of zeros in a package of about 100 KiB.
            ("huge", zip_dir(GREETER, {"name: greeter": "name: huge"},
                             {"zeros.bin": bytes(101 << 20)}), True, "larger than 104857600 bytes"),
        ]
        for name, package, checksum, reason in cases:
            self.publish("switchboard", name, "1.0.0", package, checksum=checksum)
            task = self.install("switchboard/" + name)
            self.assertEqual(task["status"], "failed", (name, task))
            self.assertIn(reason, task["runtime"]["exception"], name)
            status, _, _ = self.as_user("GET", "/api/v1/plugins/switchboard/" + name)
            self.assertEqual(status, 404, name)
        self.control("behaviour", {"download": "500"})
        try:
            self.publish("switchboard", "flaky", "1.0.0", self.greeter(name="flaky"))
            task = self.install("switchboard/flaky")
            self.assertEqual(task["status"], "failed")
            self.assertIn("download failed", task["runtime"]["exception"])
        finally:
            self.control("behaviour", {"download": "ok"})

    def test_local_package_upload(self):
        package = self.greeter(name="local1")
        boundary = "----sbtestboundary"
        body = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"p.zip\"\r\n"
                "Content-Type: application/zip\r\n\r\n" % boundary).encode() + package + \
            ("\r\n--%s--\r\n" % boundary).encode()
        status, resp, _ = self.srv.req(
            "POST", "/api/v1/plugins/install/local", token=self.token, raw_body=body,
            headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
        self.assertEqual(status, 200, resp)
        task = self.wait_task(resp["data"]["task_id"])
        self.assertEqual(task["status"], "succeeded", task)
        self.assertEqual(self.plugin("switchboard/local1")["install_source"], "local")
        # Plugin folders are the server's alone, like the rest of the data directory.
        folder = self.srv.data_dir
        for part in ("plugins", "switchboard", "local1", "1.0.0"):
            folder = os.path.join(folder, part)
            self.assertEqual(os.stat(folder).st_mode & 0o777, 0o700, folder)
        status, resp, _ = self.srv.req(
            "POST", "/api/v1/plugins/install/local", token=self.token, raw_body=b"garbage",
            headers={"Content-Type": "application/zip"})
        self.assertError(status, resp, 400, "not a zip file")
        self.delete("switchboard/local1")


# A plugin whose event handler never answers, and whose !crash command kills it.
MISBEHAVING_MANIFEST = """apiVersion: v1
kind: Plugin
metadata:
  author: switchboard
  name: NAME
  version: 1.0.0
spec:
  config: []
execution:
  command: [python3, main.py]
"""
MISBEHAVING_MAIN = r"""
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if "action" not in m:
        continue
    if m["action"] == "handshake":
        print(json.dumps({"seq_id": m["seq_id"], "code": 0, "data": {
            "protocol_version": 1, "events": ["message_received"],
            "commands": [{"name": "crash", "description": "dies"}]}}), flush=True)
    elif m["action"] == "command":
        os._exit(1)
    elif m["action"] == "shutdown":
        break
    # events: never answered
"""

# Rewrites the prompt (before_model_request) and the reply (reply_ready).
EDITOR_MAIN = r"""
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "action" not in m:
        continue
    seq, data = m["seq_id"], m.get("data") or {}
    if m["action"] == "handshake":
        out = {"protocol_version": 1, "events": ["before_model_request", "reply_ready"]}
    elif m["action"] == "event" and data.get("event") == "before_model_request":
        msgs = data["messages"]
        out = {"messages": [{"role": "system", "content": "Answer like a pirate."}] + msgs}
    elif m["action"] == "event" and data.get("event") == "reply_ready":
        out = {"reply": data["reply"].upper() + " (edited)"}
    elif m["action"] == "shutdown":
        break
    else:
        out = {}
    print(json.dumps({"seq_id": seq, "code": 0, "data": out}), flush=True)
"""

# Answers !ask <model> through invoke_llm and !push <bot> through send_message.
CALLER_MAIN = r"""
import json, sys
seq = 1000
def call(action, data):
    global seq
    seq += 1
    print(json.dumps({"seq_id": seq, "action": action, "data": data}), flush=True)
    while True:
        m = json.loads(sys.stdin.readline())
        if m.get("seq_id") == seq and "code" in m:
            return m
for line in sys.stdin:
    m = json.loads(line)
    if "action" not in m:
        continue
    seq_id, data = m["seq_id"], m.get("data") or {}
    if m["action"] == "handshake":
        out = {"protocol_version": 1, "commands": [{"name": "ask"}, {"name": "push"}]}
    elif m["action"] == "command" and data["command"] == "ask":
        r = call("invoke_llm", {"model_uuid": data["args"][0],
                                "messages": [{"role": "user", "content": "hello from plugin"}]})
        out = {"reply": "model said: " + (r["data"]["content"] if r["code"] == 0 else r["message"])}
    elif m["action"] == "command" and data["command"] == "push":
        r = call("send_message", {"bot_uuid": data["args"][0], "target_type": "person",
                                  "target_id": "u9",
                                  "message_chain": [{"type": "Plain", "text": "pushed"}]})
        out = {"reply": "sent" if r["code"] == 0 else "refused: " + r["message"]}
    elif m["action"] == "shutdown":
        break
    else:
        out = {}
    print(json.dumps({"seq_id": seq_id, "code": 0, "data": out}), flush=True)
"""

SECRET = "whsec_plugins"


class PluginMessageCase(PluginCase):
    """A webhook bot whose replies a callback receiver collects, and a fake model provider (also
    used by tests/api/test_plugin_routes.py)."""

    @classmethod
    def setUpClass(cls):
        cls.fake = FakeProvider()
        cls.callback = CallbackReceiver(SECRET)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.fake.stop()
        cls.callback.stop()

    def setUp(self):
        self.fake.reset()
        self.callback.clear()

    def bot(self, preferences=None, abilities=None):
        provider = self.make_provider(base_url=self.fake.base + "/v1", api_keys=["sk-good-1"])
        model = self.make_model(provider, name="gpt-test", abilities=abilities or [])
        self.last_model = model
        pipeline = self.make_pipeline(name="p", config={"ai": {
            "runner": {"runner": "local-agent"},
            "local-agent": {"model": {"primary": model, "fallbacks": []}, "max-round": 10,
                            "prompt": [{"role": "system", "content": "Be brief."}]}}})
        if preferences is not None:
            self.ok("PUT", "/api/v1/pipelines/" + pipeline, {"extensions_preferences": preferences})
        bot = self.make_bot(adapter="webhook", enable=True, use_pipeline_uuid=pipeline,
                            config={"secret": SECRET, "callback_url": self.callback.url})
        self.assertTrue(wait_until(lambda: self.ok("GET", "/api/v1/platform/bots/" + bot)
                                   ["bot"]["runtime"]["status"] == "running"))
        return bot

    def say(self, bot, text, sender="u1"):
        body = json.dumps({"message_id": "m-" + unknown_uuid(), "sender": {"id": sender},
                           "chat": {"type": "person", "id": sender},
                           "message_chain": [{"type": "Plain", "text": text}]}).encode()
        ts = int(time.time())
        status, resp, _ = self.srv.req("POST", "/bots/" + bot, raw_body=body, headers={
            "Content-Type": "application/json", "X-Switchboard-Timestamp": str(ts),
            "X-Switchboard-Signature": sign(SECRET, ts, body)})
        self.assertEqual(status, 200, resp)

    def replies(self, count, timeout=15):
        got = self.callback.wait_for(count, timeout)
        self.assertGreaterEqual(len(got), count, got)
        return ["".join(e.get("text", "") for e in g["body"]["message_chain"]) for g in got]


class PluginMessageTest(PluginMessageCase):
    """Messages through a webhook bot reach the plugins bound to its pipeline."""

    def test_events_and_commands_reach_the_bound_plugin(self):
        self.publish("switchboard", "greeter", "1.0.0", self.greeter())
        self.assertEqual(self.install("switchboard/greeter")["status"], "succeeded")
        self.ok("PUT", "/api/v1/plugins/switchboard/greeter/config",
                {"greeting": "Howdy", "trigger": "hey"})
        self.assertTrue(wait_until(
            lambda: self.plugin("switchboard/greeter")["status"] == "running", 10))
        bot = self.bot()
        self.say(bot, "hey")
        self.assertIn("Howdy, u1!", self.replies(1)[0])
        self.assertEqual(self.fake.chat_requests(), [])  # the plugin prevented the model
        self.say(bot, "!greet Ann")
        self.assertIn("Howdy, Ann!", self.replies(2)[1])
        self.say(bot, "what is new?")
        self.assertIn("what is new?", self.replies(3)[2])  # no plugin answer: the model's
        self.assertEqual(len(self.fake.chat_requests()), 1)
        self.say(bot, "!help")
        self.assertIn("!greet - greet someone", self.replies(4)[3])

        # A pipeline bound to no plugin: the model answers "hey", and !greet is unknown.
        self.callback.clear()
        other = self.bot({"enable_all_plugins": False, "plugins": []})
        self.say(other, "hey")
        self.say(other, "!greet Ann")
        got = self.replies(2)
        self.assertTrue(any("Unknown command: !greet" in g for g in got), got)
        self.delete("switchboard/greeter")

    def test_plugin_tools_are_offered_to_models_that_call_functions(self):
        self.publish("switchboard", "greeter", "1.0.0", self.greeter())
        self.assertEqual(self.install("switchboard/greeter")["status"], "succeeded")
        bot = self.bot(abilities=["chat", "func_call"])
        self.say(bot, "please call tool now")
        reply = self.replies(1)[0]
        self.assertIn("[tool result:", reply)
        self.assertIn("words", reply)
        chats = self.fake.chat_requests()
        self.assertEqual(len(chats), 2)
        tools = chats[0]["body"]["tools"]
        self.assertEqual([t["function"]["name"] for t in tools], ["word_count"])
        self.assertEqual(chats[1]["body"]["messages"][-1]["role"], "tool")
        # A model without the ability is offered no tools.
        self.fake.reset()
        self.callback.clear()
        plain = self.bot()
        self.say(plain, "please call tool now")
        self.replies(1)
        self.assertNotIn("tools", self.fake.chat_requests()[0]["body"])
        self.delete("switchboard/greeter")

    def test_plugins_edit_the_prompt_and_the_reply(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("manifest.yaml", MISBEHAVING_MANIFEST.replace("NAME", "editor"))
            z.writestr("main.py", EDITOR_MAIN)
        self.publish("switchboard", "editor", "1.0.0", buf.getvalue())
        self.assertEqual(self.install("switchboard/editor")["status"], "succeeded")
        bot = self.bot()
        self.say(bot, "ahoy")
        self.assertIn("ECHO: AHOY (edited)", self.replies(1)[0])
        messages = self.fake.chat_requests()[0]["body"]["messages"]
        self.assertEqual(messages[0], {"role": "system", "content": "Answer like a pirate."})
        self.assertEqual(messages[-1]["content"], "ahoy")
        self.delete("switchboard/editor")

    def test_plugins_invoke_models_and_send_messages_through_the_core(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("manifest.yaml", MISBEHAVING_MANIFEST.replace("NAME", "caller"))
            z.writestr("main.py", CALLER_MAIN)
        self.publish("switchboard", "caller", "1.0.0", buf.getvalue())
        self.assertEqual(self.install("switchboard/caller")["status"], "succeeded")
        bot = self.bot()
        self.say(bot, "!ask " + self.last_model)
        self.assertIn("model said: echo: hello from plugin", self.replies(1)[0])
        self.say(bot, "!push " + bot)
        got = self.callback.wait_for(3, 15)
        texts = ["".join(e.get("text", "") for e in g["body"]["message_chain"]) for g in got]
        self.assertIn("pushed", texts)
        pushed = [g for g in got if "pushed" in json.dumps(g["body"])][0]
        self.assertEqual(pushed["body"]["target"], {"type": "person", "id": "u9"})
        self.assertTrue(any("sent" == t.strip() or t.endswith("sent") for t in texts), texts)
        self.say(bot, "!push " + unknown_uuid())
        self.assertTrue(any("refused:" in t for t in self.replies(4)), self.replies(4))
        self.delete("switchboard/caller")

    def test_a_hanging_plugin_is_skipped_and_a_crashed_one_restarts(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("manifest.yaml", MISBEHAVING_MANIFEST.replace("NAME", "hanger"))
            z.writestr("main.py", MISBEHAVING_MAIN)
        self.publish("switchboard", "hanger", "1.0.0", buf.getvalue())
        self.assertEqual(self.install("switchboard/hanger")["status"], "succeeded")
        bot = self.bot()
        t0 = time.monotonic()
        self.say(bot, "still there?")
        self.assertIn("still there?", self.replies(1, timeout=20)[0])
        self.assertLess(time.monotonic() - t0, 15)
        self.say(bot, "!crash")
        self.replies(2, timeout=20)  # the failure hint or error text
        self.assertTrue(wait_until(
            lambda: "exited with status 1" in self.plugin("switchboard/hanger")["error"] or
            self.plugin("switchboard/hanger")["status"] == "restarting", 10))
        self.assertTrue(wait_until(
            lambda: self.plugin("switchboard/hanger")["status"] == "running", 15))
        restarted = self.plugin("switchboard/hanger")
        self.assertEqual(restarted["restarts"], 1, restarted)
        self.assertEqual(restarted["recent_crashes"], 1, restarted)
        self.delete("switchboard/hanger")

    def test_a_hostile_plugin_reaches_nothing_of_the_server(self):
        # tests/plugins/hostile tries every escape of docs/security.md from inside its sandbox,
        # aimed at this very server: its data directory, process, port and database.
        self.publish("tests", "hostile", "1.0.0", zip_dir(HOSTILE))
        self.assertEqual(self.install("tests/hostile")["status"], "succeeded")
        plugin = self.plugin("tests/hostile")
        self.assertEqual(plugin["status"], "running", plugin)
        self.assertTrue(plugin["sandbox"]["status"].startswith("bubblewrap; network off"),
                        plugin["sandbox"])
        marker = "sb-api-hostile-%d" % os.getpid()
        self.ok("PUT", "/api/v1/plugins/tests/hostile/config", {
            "data_dir": self.srv.data_dir, "server_pid": str(self.srv.proc.pid),
            "port": str(self.srv.port), "marker": marker, "processes": "150",
            "memory_mb": "768"})
        self.assertTrue(wait_until(
            lambda: self.plugin("tests/hostile")["status"] == "running", 10))
        bot = self.bot(preferences={"enable_all_plugins": False,
                                    "plugins": [{"author": "tests", "name": "hostile"}]})
        self.say(bot, "!escape")
        report = json.loads(self.replies(1, timeout=90)[0])
        self.assertGreaterEqual(len(report), 30, report)
        reached = {k: v["detail"] for k, v in report.items() if v["reached"]}
        self.assertEqual(reached, {})
        self.assertIn("Errno", report["read jwt_secret"]["detail"])
        # Its setsid grandchild dies with it.
        self.assertTrue(wait_until(lambda: self.processes_marked(marker) == 1, 10))
        self.ok("PUT", "/api/v1/plugins/tests/hostile/enabled", {"enabled": False})
        self.assertTrue(wait_until(lambda: self.processes_marked(marker) == 0, 10))
        # The server still works and still has all its secrets.
        self.assertTrue(os.path.exists(os.path.join(self.srv.data_dir, "jwt_secret")))
        self.ok("GET", "/api/v1/plugins")
        self.delete("tests/hostile")

    @staticmethod
    def processes_marked(marker):
        count = 0
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    count += marker.encode() in f.read()
            except OSError:
                pass
        return count

    def test_network_needs_the_manifest_and_the_admin(self):
        asking = zip_dir(GREETER, {"name: greeter": "name: online",
                                   "command: [python3, main.py]":
                                   "command: [python3, main.py]\n  network: true"})
        self.publish("switchboard", "online", "1.0.0", asking)
        self.assertEqual(self.install("switchboard/online")["status"], "succeeded")
        sandbox = self.plugin("switchboard/online")["sandbox"]
        self.assertEqual((sandbox["network_requested"], sandbox["allow_network"]), (True, False))
        self.assertIn("network off", sandbox["status"])
        self.ok("PUT", "/api/v1/plugins/switchboard/online/sandbox", {"allow_network": True})
        self.assertTrue(wait_until(
            lambda: "network on" in self.plugin("switchboard/online")["sandbox"]["status"], 10))
        self.ok("PUT", "/api/v1/plugins/switchboard/online/sandbox", {"allow_network": False})
        self.assertTrue(wait_until(
            lambda: "network off" in self.plugin("switchboard/online")["sandbox"]["status"], 10))
        status, resp, _ = self.as_user("PUT", "/api/v1/plugins/switchboard/online/sandbox", {})
        self.assertError(status, resp, 400, "allow_network")
        # A plugin whose manifest does not ask stays offline even when the admin allows it.
        self.publish("switchboard", "greeter", "1.0.0", self.greeter())
        self.assertEqual(self.install("switchboard/greeter")["status"], "succeeded")
        self.ok("PUT", "/api/v1/plugins/switchboard/greeter/sandbox", {"allow_network": True})
        plugin = self.plugin("switchboard/greeter")
        self.assertTrue(plugin["sandbox"]["allow_network"])
        self.assertIn("network off", plugin["sandbox"]["status"])
        self.delete("switchboard/greeter")
        self.delete("switchboard/online")

    def test_readme_and_icon_never_follow_a_link(self):
        self.publish("switchboard", "linked", "1.0.0", self.greeter(name="linked"))
        self.assertEqual(self.install("switchboard/linked")["status"], "succeeded")
        folder = os.path.join(self.srv.data_dir, "plugins", "switchboard", "linked", "1.0.0")
        # What a plugin able to write its own folder would do.
        os.remove(os.path.join(folder, "README.md"))
        os.symlink(os.path.join(self.srv.data_dir, "jwt_secret"), os.path.join(folder, "README.md"))
        status, resp, _ = self.as_user("GET", "/api/v1/plugins/switchboard/linked/readme")
        self.assertEqual(status, 404, resp)
        with open(os.path.join(self.srv.data_dir, "jwt_secret")) as f:
            self.assertNotIn(f.read().strip(), json.dumps(resp))
        self.delete("switchboard/linked")


class PluginRestartTest(PluginCase):

    def test_installed_plugins_run_again_after_a_restart(self):
        self.publish("switchboard", "keep", "1.0.0", self.greeter(name="keep"))
        self.assertEqual(self.install("switchboard/keep")["status"], "succeeded")
        self.ok("PUT", "/api/v1/plugins/switchboard/keep/config", {"greeting": "Again"})
        self.srv.restart()
        self.__class__.token = self.srv.login()
        self.assertTrue(wait_until(
            lambda: self.plugin("switchboard/keep")["status"] == "running", 15))
        self.assertEqual(self.plugin("switchboard/keep")["config"]["greeting"], "Again")


if __name__ == "__main__":
    unittest.main()
