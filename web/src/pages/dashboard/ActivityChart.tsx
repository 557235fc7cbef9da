// The activity chart (uPlot). Loaded lazily by the dashboard, so uPlot stays out of the first-load
// bundle and the page never waits for it. The colours come from the theme's CSS variables and the
// chart is redrawn when the theme or the width changes.
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { seriesNames, type Activity } from "./activity";

const colourVars: Record<string, string> = {
  messages: "--primary",
  replies: "--ok",
  modelCalls: "--warn",
  failures: "--danger",
};

export default function ActivityChart({ activity }: { activity: Activity }) {
  const { t } = useTranslation("dashboard");
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let plot: uPlot | null = null;
    const build = () => {
      plot?.destroy();
      const css = getComputedStyle(document.documentElement);
      const colour = (name: string) => css.getPropertyValue(name).trim() || "#888";
      const axis = { stroke: colour("--muted"), grid: { stroke: colour("--border"), width: 1 }, ticks: { show: false } };
      plot = new uPlot(
        {
          width: Math.max(el.clientWidth, 280),
          height: 240,
          scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, 4)] } },
          axes: [axis, { ...axis, size: 44, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] }],
          series: [
            { label: t("chart.time") },
            ...seriesNames.map((s) => ({
              label: t(`series.${s}`),
              stroke: colour(colourVars[s]),
              width: 2,
              points: { size: 4 },
            })),
          ],
          legend: { live: true },
        },
        [activity.times, ...seriesNames.map((s) => activity.counts[s])],
        el,
      );
    };
    build();
    let width = el.clientWidth;
    const resize = new ResizeObserver(() => {
      if (!plot || el.clientWidth === width) return;
      width = el.clientWidth;
      plot.setSize({ width: Math.max(width, 280), height: 240 });
    });
    resize.observe(el);
    const theme = new MutationObserver(build);
    theme.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    return () => {
      resize.disconnect();
      theme.disconnect();
      plot?.destroy();
    };
  }, [activity, t]);

  return <div ref={box} className="activity-chart" role="img" aria-label={t("chart.label")} />;
}
