/** Stylesheets imported for their side effect: esbuild bundles them into the dashboard's CSS file. */
declare module '*.css';
