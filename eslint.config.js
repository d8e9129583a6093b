import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // Tests and benchmarks may print (skips, figures); the product writes through its surfaces.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // Layers import one way only (architecture.md): core ← tools ← surfaces ← bin.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['**/tools/**', '**/surfaces/**', '**/bin/**', '@modelcontextprotocol/*'] },
      ],
    },
  },
  {
    files: ['src/tools/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['**/surfaces/**', '**/bin/**', '@modelcontextprotocol/*'] },
      ],
    },
  },
  {
    files: ['src/surfaces/cli/**/*.ts'],
    rules: {
      // Only the MCP surface imports the SDK; the CLI reaches it lazily through `mcp/run`.
      'no-restricted-imports': ['error', { patterns: ['@modelcontextprotocol/*'] }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js', 'bin/*'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
  },
);
