module.exports = 'bom package main';
