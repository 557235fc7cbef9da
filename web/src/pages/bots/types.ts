// Shapes only the Bots pages read (GET /platform/adapters; docs/api.md).
import type { I18nText, SchemaItem } from "../../api/types";

// An adapter's schema item may carry keys the shared SchemaItem does not name (download-link's url).
export type AdapterItem = SchemaItem & {
  url?: string;
  download_filename?: string;
  login_platform?: string;
};

export interface Adapter {
  name: string;
  label: I18nText;
  description: I18nText;
  icon: string;
  spec: { config: AdapterItem[] };
}

// Custom item types that are displays or actions, not values the person types.
export const displayOnlyTypes = new Set(["webhook-url", "download-link", "embed-code", "qr-code-login"]);
