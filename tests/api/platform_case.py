"""What every end-to-end platform test repeated, made once: one fake model (fake_llm.py) per class,
reset before each test; a pipeline that answers with it; a bot of the class's adapter on that
pipeline, deleted after the test; and the bot's status, running/error waits, log and send_message.

    class KookBotTest(PlatformCase):
        adapter = "kook"
        pipeline_name = "kook"

        def setUp(self):
            super().setUp()
            self.kook = FakeKook()
            self.addCleanup(self.kook.stop)

        def bot(self, token=TOKEN):
            return self.platform_bot({"token": token, "api_base_url": self.kook.base + "/api"})
"""

import time

from harness import ServerTestCase
from fake_clients import FakeProvider, wait_until

BOTS = "/api/v1/platform/bots/"


class PlatformCase(ServerTestCase):
    llm = None
    adapter = None          # the adapter name, as in adapters.json
    pipeline_name = "bot"   # the pipeline's name (it only labels the pipeline)
    model_abilities = None  # e.g. ["chat", "vision"]; None: the model's default abilities
    running_timeout = 10    # seconds for a bot to reach "running"
    output_misc = {"quote-origin": False}  # the pipeline's output.misc

    @classmethod
    def setUpClass(cls):
        cls.llm = FakeProvider()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.llm.stop()

    def setUp(self):
        self.llm.reset()

    def pipeline(self, abilities=None):
        """A pipeline whose model is the class's fake model and whose output.misc is the class's
        `output_misc`; the model's abilities are `abilities`, else the class's `model_abilities`."""
        provider = self.make_provider(base_url=self.llm.base + "/v1", api_keys=["sk-good-1"])
        if abilities is None:
            abilities = self.model_abilities
        extra = {} if abilities is None else {"abilities": list(abilities)}
        model = self.make_model(provider, name="gpt-test", **extra)
        config = {"ai": {"local-agent": {"model": {"primary": model, "fallbacks": []}}},
                  "output": {"misc": dict(self.output_misc)}}
        return self.make_pipeline(name=self.pipeline_name, config=config)

    def platform_bot(self, config, enable=True, pipeline=None):
        """A bot of `adapter` with `config` on `pipeline` (a new one by default); its uuid."""
        uuid = self.make_bot(adapter=self.adapter, enable=enable,
                             use_pipeline_uuid=pipeline or self.pipeline(), config=config)
        self.addCleanup(lambda: self.as_user("DELETE", BOTS + uuid))
        return uuid

    def status(self, bot):
        return self.ok("GET", BOTS + bot)["bot"]

    def wait_status(self, bot, status, timeout):
        def check():
            data = self.status(bot)
            return data["runtime"]["status"] == status and data
        data = wait_until(check, timeout)
        self.assertTrue(data, "bot did not reach %s: %r" % (status, self.status(bot)["runtime"]))
        return data

    def running(self, bot):
        return self.wait_status(bot, "running", self.running_timeout)

    def errored(self, bot):
        return self.wait_status(bot, "error", 10)

    def logs(self, bot):
        return self.ok("POST", BOTS + bot + "/logs", {"from_index": -1, "max_count": 1000})["logs"]

    def send(self, bot, target_type, target_id, chain):
        """send_message with the API key; `chain` is a message chain or a plain text."""
        if isinstance(chain, str):
            chain = [{"type": "Plain", "text": chain}]
        return self.as_key("POST", BOTS + bot + "/send_message", {
            "target_type": target_type, "target_id": target_id, "message_chain": chain})

    def slow_model(self, delay_ms, content):
        """The model's next chat answer is `content`, after `delay_ms`."""
        self.llm.script_next(path="/v1/chat/completions", delay_ms=delay_ms, body={
            "id": "chatcmpl-slow", "object": "chat.completion", "created": int(time.time()),
            "model": "gpt-test", "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
