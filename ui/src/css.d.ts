// Stylesheets are imported for their side effect; esbuild bundles them into the app's CSS file.
declare module '*.css' {}
