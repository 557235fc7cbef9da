import { useEffect, useState } from "react";
import { fetchIconUrl } from "./api";
import type { Plugin } from "./types";

function initials(text: string): string {
  const words = text.split(/[\s_-]+/).filter(Boolean);
  const letters = words.length > 1 ? words[0][0] + words[1][0] : text.slice(0, 2);
  return letters.toUpperCase();
}

// The plugin's own icon when its manifest names one (fetched with the token as a blob: an <img src>
// cannot send it), else its initials. Decorative: the label beside it names the plugin.
export function PluginIcon({ plugin, label, size = 40 }: { plugin: Plugin; label: string; size?: number }) {
  const [url, setUrl] = useState<string | null>(null);
  const icon = plugin.manifest?.icon ?? "";
  useEffect(() => {
    if (!icon) return;
    const controller = new AbortController();
    let created: string | null = null;
    fetchIconUrl(plugin.author, plugin.name, controller.signal)
      .then((u) => {
        created = u;
        setUrl(u);
      })
      .catch(() => setUrl(null));
    return () => {
      controller.abort();
      if (created) URL.revokeObjectURL(created);
      setUrl(null);
    };
  }, [plugin.author, plugin.name, plugin.version, icon]);
  const style = { width: size, height: size };
  if (url) return <img className="plugin-icon" src={url} alt="" style={style} />;
  return (
    <span className="plugin-icon plugin-icon-initials" aria-hidden="true" style={{ ...style, fontSize: size * 0.4 }}>
      {initials(label || plugin.name)}
    </span>
  );
}
