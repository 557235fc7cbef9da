// GET/POST /apikeys (src/http/api/encoders.cpp EncodeApiKey): `key` is masked, except in the answer
// to the POST that created it, the only time the whole key is ever sent.
export interface ApiKey {
  id: number;
  name: string;
  description: string;
  key: string;
  created_at: string;
  updated_at: string;
}
