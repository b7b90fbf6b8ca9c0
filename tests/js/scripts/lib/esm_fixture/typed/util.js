// A .js file that is an ES module because its package.json says "type": "module".
export const twice = (x) => x * 2;
export const meta = { url: import.meta.url, filename: import.meta.filename, dirname: import.meta.dirname };
