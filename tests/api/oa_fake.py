"""Client of tests/fakes/fake_officialaccount.py (a WeChat Official Account stand-in)."""

from fake_clients import _FakeProcess, wait_until


class FakeOfficialAccount(_FakeProcess):
    script = "fake_officialaccount.py"
    banner = "FAKE_OA_PORT"

    def config(self, **values):
        return self.control("POST", "/_control/config", values)

    def reset(self):
        self.control("POST", "/_control/reset", {})

    def message(self, url, openid, text=None, **spec):
        """Starts WeChat's delivery of a message (up to 3 attempts) and returns its record id."""
        body = dict({"url": url, "openid": openid}, **spec)
        if text is not None:
            body["text"] = text
        return self.control("POST", "/_control/message", body)["id"]

    def delivery(self, ident, timeout=25):
        def done():
            found = [d for d in self.control("GET", "/_control/deliveries")["deliveries"]
                     if d["id"] == ident and d["done"]]
            return found and found[0]
        got = wait_until(done, timeout)
        assert got, "the delivery did not finish"
        return got

    def sent(self):
        return self.control("GET", "/_control/sent")["sent"]

    def tokens_issued(self):
        return self.control("GET", "/_control/tokens")["issued"]
