"""Client of tests/fakes/fake_wecom.py (WeCom app and customer-service APIs, encrypted callbacks)
for the WeCom end-to-end tests.

    wecom = FakeWeComClient()
    wecom.config(corpid=..., secret=..., kf_secret=..., token=..., encoding_aes_key=...)
    wecom.control("POST", "/_control/app_message", {"url": bot_url, "from": "zhangsan",
                                                    "content": "hi"})
    wecom.sent()      # successful message/send and kf/send_msg calls
"""

from fake_clients import _FakeProcess


class FakeWeComClient(_FakeProcess):
    script = "fake_wecom.py"
    banner = "FAKE_WECOM_PORT"

    def config(self, **settings):
        return self.control("POST", "/_control/config", settings)

    def sent(self):
        return self.control("GET", "/_control/sent")["sent"]

    def calls(self, path=None):
        calls = self.control("GET", "/_control/calls")["calls"]
        return [c for c in calls if path is None or c["path"].endswith(path)]

    def uploads(self):
        return self.control("GET", "/_control/uploads")["uploads"]

    def reset(self):
        self.control("POST", "/_control/reset", {})
