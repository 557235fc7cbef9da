// /webhooks (src/http/api/webhook_routes.cpp, docs/webhooks.md): `secret` is whole only in the
// answer to the POST that created the webhook and to a PUT with rotate_secret; masked otherwise.
export interface LastDelivery {
  status: "" | "ok" | "failed";
  http_status: number;
  error: string;
  at: string | null;
  deliveries: number;
  failures: number;
}

export interface Webhook {
  id: number;
  name: string;
  url: string;
  description: string;
  enabled: boolean;
  secret: string;
  created_at: string;
  updated_at: string;
  last_delivery: LastDelivery;
}
