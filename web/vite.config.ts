// Vite build of the console. `npm run dev` serves it on :5173 and proxies the API (and the debug
// chat WebSocket) to a Switchboard started with `--console-dir web/dist` or plain `make run`.
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

const server = process.env.SWITCHBOARD_URL ?? "http://127.0.0.1:5300";

export default defineConfig({
  plugins: [react()],
  build: {
    target: "es2022",
    // Hashed names under /assets/ are what the server caches for a year; keep the default.
    assetsDir: "assets",
    sourcemap: false,
    chunkSizeWarningLimit: 400,
    rollupOptions: {
      output: {
        manualChunks: {
          react: ["react", "react-dom", "react-router"],
          query: ["@tanstack/react-query"],
          i18n: ["i18next", "react-i18next", "i18next-browser-languagedetector"],
        },
      },
    },
  },
  server: {
    proxy: {
      "/api/": { target: server, ws: true, changeOrigin: false },
      "/metrics": server,
    },
  },
  test: { environment: "node", include: ["src/**/*.test.ts"] },
});
