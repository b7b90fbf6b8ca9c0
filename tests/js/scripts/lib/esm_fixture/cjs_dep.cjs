exports.answer = 42;
exports.name = 'cjs';
