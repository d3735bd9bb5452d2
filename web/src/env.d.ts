// The stylesheet is imported for its side effect: Bun.build bundles it next to the script.
declare module '*.css'
