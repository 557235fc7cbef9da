// Both ends of the webhook adapter (docs/webhook.md): a signed POST to /bots/{uuid}, and the
// callback server that receives the bot's replies and checks their signature.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

export function sign(secret, timestamp, body) {
  return "sha256=" + createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

export async function sendSigned(baseUrl, botUuid, secret, message) {
  const body = Buffer.from(JSON.stringify(message));
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${baseUrl}/bots/${botUuid}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Switchboard-Timestamp": timestamp,
      "X-Switchboard-Signature": sign(secret, timestamp, body),
    },
    body,
  });
  return { status: res.status, body: await res.text() };
}

// Listens on a free loopback port; `received` holds every verified callback body, and a callback
// whose signature does not verify is answered 401 and recorded in `rejected`.
export function startCallbackServer(secret) {
  const received = [];
  const rejected = [];
  const waiters = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const expected = Buffer.from(sign(secret, req.headers["x-switchboard-timestamp"] ?? "", body));
      const got = Buffer.from(String(req.headers["x-switchboard-signature"] ?? ""));
      if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
        rejected.push(body.toString());
        res.writeHead(401).end();
        return;
      }
      received.push(JSON.parse(body.toString()));
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
      waiters.splice(0).forEach((w) => w());
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/callback`,
        received,
        rejected,
        // Resolves once a received callback satisfies `predicate`, or rejects after `timeoutMs`.
        waitFor(predicate, timeoutMs = 10_000) {
          return new Promise((res, rej) => {
            const timer = setTimeout(() => rej(new Error(`no matching webhook callback in ${timeoutMs} ms`)), timeoutMs);
            const check = () => {
              const hit = received.find(predicate);
              if (hit) {
                clearTimeout(timer);
                res(hit);
              } else waiters.push(check);
            };
            check();
          });
        },
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
