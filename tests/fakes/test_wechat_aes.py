"""Self-tests of wechat_aes.py against published known answers: FIPS-197 (AES-256), Tencent's
WeCom callback sample (weworkapi_python callback/Sample.py) and its WeChat Official Account Java
sample (WXBizMsgCryptTest), plus the refusals a fake must make."""

import unittest

import wechat_aes as w

WECOM_TOKEN = "hJqcu3uJ9Tn2gXPmxx2w9kkCkCE2EPYo"
WECOM_AES_KEY = "6qkdMrq68nTKduznJYO1A37W2oEgpkMUvkttRToqhUt"
WECOM_CORP_ID = "ww1436e0e65a779aee"
WECOM_ECHOSTR = ("fsi1xnbH4yQh0+PJxcOdhhK6TDXkjMyhEPA7xB2TGz6b+g7xyAbEkRxN/3cNXW9qdqjnoVzEtpbhnFyq6SV"
                 "HyA==")
WECOM_POST_ENCRYPT = (
    "Kl7kjoSf6DMD1zh7rtrHjFaDapSCkaOnwu3bqLc5tAybhhMl9pFeK8NslNPVdMwmBQTNoW4mY7AIjeLvEl3NyeTkAgGzBh"
    "zTtRLNshw2AEew+kkYcD+Fq72Kt00fT0WnN87hGrW8SqGc+NcT3mu87Ha3dz1pSDi6GaUA6A0sqfde0VJPQbZ9U+3JWcoD"
    "4Z5jaU0y9GSh010wsHF8KZD24YhmZH4ch4Ka7ilEbjbfvhKkNL65HHL0J6EYJIZUC2pFrdkJ7MhmEbU2qARR4iQHE7wy24"
    "qy0cRX3Mfp6iELcDNfSsPGjUQVDGxQDCWjayJOpcwocugux082f49HKYg84EpHSGXAyh+/oxwaWbvL6aSDPOYuPDGOCI8jm"
    "nKiypE+")
WECOM_POST_PLAIN = (
    "<xml><ToUserName>ww1436e0e65a779aee</ToUserName><FromUserName>ChenJiaShun</FromUserName>"
    "<CreateTime>1476422779</CreateTime><MsgType>text</MsgType><Content>你好</Content>"
    "<MsgId>1456453720</MsgId><AgentID>1000002</AgentID></xml>")


class AesTest(unittest.TestCase):
    def test_fips197_aes256_known_answer(self):
        # FIPS-197 Appendix C.3.
        key = bytes(range(32))
        plain = bytes.fromhex("00112233445566778899aabbccddeeff")
        rk = w._expand_key(key)
        self.assertEqual(w._encrypt_block(rk, plain).hex(), "8ea2b7ca516745bfeafc49904b496089")
        self.assertEqual(w._decrypt_block(rk, bytes.fromhex("8ea2b7ca516745bfeafc49904b496089")),
                         plain)

    def test_cbc_round_trip(self):
        key, iv = bytes(range(32)), bytes(range(16))
        data = bytes(range(64))
        self.assertEqual(w.aes256_cbc_decrypt(key, iv, w.aes256_cbc_encrypt(key, iv, data)), data)
        with self.assertRaises(w.WeChatCryptError):
            w.aes256_cbc_encrypt(key, iv, b"x" * 15)


class WeComSampleTest(unittest.TestCase):
    def setUp(self):
        self.crypt = w.WeChatCrypt(WECOM_TOKEN, WECOM_AES_KEY, WECOM_CORP_ID)

    def test_signatures(self):
        self.assertEqual(self.crypt.signature("1476416373", "47744683", WECOM_ECHOSTR),
                         "012bc692d0a58dd4b10f8dfe5c4ac00ae211ebeb")
        self.assertEqual(self.crypt.signature("1476422779", "1597212914", WECOM_POST_ENCRYPT),
                         "0c3914025cb4b4d68103f6bfc8db550f79dcf48e")

    def test_decrypts_echostr_and_message(self):
        self.assertEqual(self.crypt.decrypt(WECOM_ECHOSTR), "1288432023552776189")
        self.assertEqual(self.crypt.decrypt(WECOM_POST_ENCRYPT), WECOM_POST_PLAIN)

    def test_wrong_receive_id_refused(self):
        with self.assertRaises(w.WeChatCryptError):
            self.crypt.decrypt(WECOM_POST_ENCRYPT, receive_id="ww_other")
        forged = self.crypt.encrypt("hi", receive_id="ww_other")
        with self.assertRaises(w.WeChatCryptError):
            self.crypt.decrypt(forged)

    def test_wrong_key_refused(self):
        other = w.WeChatCrypt(WECOM_TOKEN, "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
                              WECOM_CORP_ID)
        with self.assertRaises(w.WeChatCryptError):
            other.decrypt(WECOM_POST_ENCRYPT)

    def test_round_trip_pads_to_32(self):
        for n in (0, 1, 11, 12, 43, 44, 200):
            text = "x" * n
            enc = self.crypt.encrypt(text)
            import base64
            raw = base64.b64decode(enc)
            # 16 random + 4 length + message + corp id, padded to a multiple of 32.
            self.assertEqual(len(raw) % 32, 0)
            self.assertEqual(self.crypt.decrypt(enc), text)

    def test_bad_inputs(self):
        for bad in ("not base64!", "", "QUJD"):
            with self.assertRaises(w.WeChatCryptError):
                self.crypt.decrypt(bad)
        with self.assertRaises(w.WeChatCryptError):
            w.aes_key("short")


class OfficialAccountSampleTest(unittest.TestCase):
    def test_java_sample_encrypts(self):
        crypt = w.WeChatCrypt("pamtest", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
                              "wxb11529c136998cb6")
        enc = crypt.encrypt("我是中文abcd123", random16=b"aaaabbbbccccdddd")
        self.assertEqual(enc, "jn1L23DB+6ELqJ+6bruv21Y6MD7KeIfP82D6gU39rmkgczbWwt5+3bnyg5K55bgVtVzd8"
                              "32WzZGMhkP72vVOfg==")
        self.assertEqual(crypt.decrypt(enc), "我是中文abcd123")

    def test_plain_signature(self):
        self.assertEqual(w.plain_signature("b", "c", "a"),
                         __import__("hashlib").sha1(b"abc").hexdigest())


if __name__ == "__main__":
    unittest.main()
