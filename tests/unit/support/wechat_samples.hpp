// Tencent's published WXBizMsgCrypt samples, shared by the crypto and the callback-codec tests.
#pragma once

namespace sb::platforms::common::samples {

// Tencent's official WeCom sample (weworkapi_python callback/Sample.py, WXBizMsgCrypt demo).
constexpr char kWeComToken[] = "hJqcu3uJ9Tn2gXPmxx2w9kkCkCE2EPYo";
constexpr char kWeComAesKey[] = "6qkdMrq68nTKduznJYO1A37W2oEgpkMUvkttRToqhUt";
constexpr char kWeComCorpId[] = "ww1436e0e65a779aee";
constexpr char kWeComEchoStr[] =
    "fsi1xnbH4yQh0+PJxcOdhhK6TDXkjMyhEPA7xB2TGz6b+g7xyAbEkRxN/3cNXW9qdqjnoVzEtpbhnFyq6SVHyA==";
constexpr char kWeComPostEncrypt[] =
    "Kl7kjoSf6DMD1zh7rtrHjFaDapSCkaOnwu3bqLc5tAybhhMl9pFeK8NslNPVdMwmBQTNoW4mY7AIjeLvEl3NyeTkAgGzBh"
    "zTtRLNshw2AEew+kkYcD+Fq72Kt00fT0WnN87hGrW8SqGc+NcT3mu87Ha3dz1pSDi6GaUA6A0sqfde0VJPQbZ9U+3JWcoD"
    "4Z5jaU0y9GSh010wsHF8KZD24YhmZH4ch4Ka7ilEbjbfvhKkNL65HHL0J6EYJIZUC2pFrdkJ7MhmEbU2qARR4iQHE7wy24"
    "qy0cRX3Mfp6iELcDNfSsPGjUQVDGxQDCWjayJOpcwocugux082f49HKYg84EpHSGXAyh+/"
    "oxwaWbvL6aSDPOYuPDGOCI8jm"
    "nKiypE+";
constexpr char kWeComPostPlain[] =
    "<xml><ToUserName>ww1436e0e65a779aee</ToUserName><FromUserName>ChenJiaShun</FromUserName>"
    "<CreateTime>1476422779</CreateTime><MsgType>text</MsgType><Content>\xe4\xbd\xa0\xe5\xa5\xbd"
    "</Content><MsgId>1456453720</MsgId><AgentID>1000002</AgentID></xml>";

// The POST body of the same sample: the signature covers its <Encrypt>.
constexpr char kWeComPostTimestamp[] = "1476422779";
constexpr char kWeComPostNonce[] = "1597212914";
constexpr char kWeComPostSignature[] = "0c3914025cb4b4d68103f6bfc8db550f79dcf48e";
constexpr char kWeComEchoTimestamp[] = "1476416373";
constexpr char kWeComEchoNonce[] = "47744683";
constexpr char kWeComEchoSignature[] = "012bc692d0a58dd4b10f8dfe5c4ac00ae211ebeb";
constexpr char kWeComEchoPlain[] = "1288432023552776189";

}  // namespace sb::platforms::common::samples
