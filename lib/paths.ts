// Where rt keeps its files, per the platform's conventions (env-paths).
// RT_CACHE_DIR / RT_DATA_DIR / RT_CONFIG_DIR override them: tests use this to
// stay out of the user's own directories.

import envPaths from 'env-paths';

const paths = envPaths('rt', { suffix: '' });

export function cacheDir(): string {
  return process.env.RT_CACHE_DIR ?? paths.cache;
}

export function dataDir(): string {
  return process.env.RT_DATA_DIR ?? paths.data;
}

export function configDir(): string {
  return process.env.RT_CONFIG_DIR ?? paths.config;
}
