import { Suspense } from "react";
import { useTranslation } from "react-i18next";
import { createBrowserRouter, createRoutesFromElements, Link, Outlet, Route } from "react-router";
import { RequireAuth } from "../auth/AuthContext";
import { Loading } from "../components/PageState";
import { AccountPage } from "../pages/auth/AccountPage";
import { LoginPage } from "../pages/auth/LoginPage";
import { ResetPasswordPage } from "../pages/auth/ResetPasswordPage";
import { SetupPage } from "../pages/auth/SetupPage";
import { Layout } from "./Layout";
import * as P from "./routes";

// A data router, so that pages can use useBlocker (the pipeline editor's unsaved changes).
export const router = createBrowserRouter(
  createRoutesFromElements(
    <Route element={<Root />}>
      <Route path="/setup" element={<SetupPage />} />
      <Route path="/login" element={<LoginPage />} />
      <Route path="/reset-password" element={<ResetPasswordPage />} />
      <Route
        element={
          <RequireAuth>
            <Layout />
          </RequireAuth>
        }
      >
        <Route index element={<P.DashboardPage />} />
        <Route path="bots" element={<P.BotsPage />} />
        <Route path="bot/:uuid" element={<P.BotPage />} />
        <Route path="pipelines" element={<P.PipelinesPage />} />
        <Route path="pipelines/:uuid" element={<P.PipelineEditorPage />} />
        <Route path="pipelines/:uuid/chat" element={<P.DebugChatPage />} />
        <Route path="models" element={<P.ModelsPage />} />
        <Route path="knowledge" element={<P.KnowledgePage />} />
        <Route path="knowledge/:uuid" element={<P.KnowledgeBasePage />} />
        <Route path="plugins" element={<P.PluginsPage />} />
        <Route path="plugins/:author/:name" element={<P.PluginPage />} />
        <Route path="mcp" element={<P.McpPage />} />
        <Route path="webhooks" element={<P.WebhooksPage />} />
        <Route path="apikeys" element={<P.ApiKeysPage />} />
        <Route path="system" element={<P.SystemPage />} />
        <Route path="account" element={<AccountPage />} />
        <Route path="*" element={<NotFound />} />
      </Route>
    </Route>,
  ),
);

function Root() {
  return (
    <Suspense fallback={<Loading />}>
      <Outlet />
    </Suspense>
  );
}

function NotFound() {
  const { t } = useTranslation();
  return (
    <div className="state">
      <h1>{t("notFound.title")}</h1>
      <Link to="/">{t("notFound.back")}</Link>
    </div>
  );
}
